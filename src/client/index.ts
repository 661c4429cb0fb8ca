/** Parley's client libraries; also importable one by one as `parley/chat-server` and `parley/feeds`. */
export { ChatServer } from './chat-server';
export type { ChatServerOptions, AuthenticateOptions, AuthenticationResponse, User, Room, Message, MessagePart, NewPart, Report, ReportCategory, ReportResolutionAction, Mute } from './chat-server';
export { Feeds } from './feeds';
export type { FeedsOptions, FeedItem, FeedPage, FeedSummary, PublishResult, AuthorizePayload, FeedsToken, FeedsAction } from './feeds';
export { ErrorResponse, ClientError, InvalidGrantTypeError, UnsupportedGrantTypeError } from './errors';
export type { ServerOptions, WriteOptions } from './http';
export type { RetryOptions } from './retries';
