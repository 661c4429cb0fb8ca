/**
 * The part of `@pusher/chatkit-client` 1.14.1 this demo uses (the package ships no types).
 * Names and shapes as in Chatkit's JavaScript reference.
 */
declare module '@pusher/chatkit-client' {
  import type { BaseClient } from '@pusher/platform';

  export interface Logger {
    verbose(...items: unknown[]): void;
    debug(...items: unknown[]): void;
    info(...items: unknown[]): void;
    warn(...items: unknown[]): void;
    error(...items: unknown[]): void;
  }

  export class TokenProvider {
    constructor(options: { url: string; queryParams?: Record<string, string>; headers?: Record<string, string> });
  }

  export interface PresenceState {
    readonly state: 'online' | 'offline' | 'unknown';
  }

  export interface User {
    readonly id: string;
    readonly name?: string;
    readonly avatarURL?: string;
    readonly presence: PresenceState;
  }

  export interface Room {
    readonly id: string;
    readonly name: string;
    readonly isPrivate: boolean;
    readonly users: User[];
    readonly userIds: string[];
    readonly unreadCount?: number;
    readonly lastMessageAt?: string;
  }

  export interface InlinePart {
    readonly partType: 'inline';
    readonly payload: { readonly type: string; readonly content: string };
  }
  export interface UrlPart {
    readonly partType: 'url';
    readonly payload: { readonly type: string; readonly url: string };
  }
  export interface AttachmentPart {
    readonly partType: 'attachment';
    readonly payload: { readonly type: string; readonly name: string; readonly size: number; url(): Promise<string> };
  }
  export type MessagePart = InlinePart | UrlPart | AttachmentPart;

  export interface Message {
    readonly id: number;
    readonly senderId: string;
    readonly sender: User;
    readonly roomId: string;
    readonly parts: MessagePart[];
    readonly createdAt: string;
  }

  export interface Cursor {
    readonly position: number;
    readonly user: User;
    readonly userId: string;
    readonly roomId: string;
  }

  export interface RoomHooks {
    onMessage?(message: Message): void;
    onUserStartedTyping?(user: User): void;
    onUserStoppedTyping?(user: User): void;
    onUserJoined?(user: User): void;
    onUserLeft?(user: User): void;
    onPresenceChanged?(state: { current: string; previous: string }, user: User): void;
    onNewReadCursor?(cursor: Cursor): void;
  }

  export interface GlobalHooks {
    onAddedToRoom?(room: Room): void;
    onRemovedFromRoom?(room: Room): void;
    onRoomUpdated?(room: Room): void;
    onRoomDeleted?(room: Room): void;
    onPresenceChanged?(state: { current: string; previous: string }, user: User): void;
  }

  export type NewPart = { type: string; content: string } | { file: File; name?: string; customData?: unknown };

  export interface CurrentUser {
    readonly id: string;
    readonly name?: string;
    readonly rooms: Room[];
    readonly roomSubscriptions: Record<string, { cancel(): void }>;
    getJoinableRooms(): Promise<Room[]>;
    createRoom(options: { name: string; private?: boolean; addUserIds?: string[] }): Promise<Room>;
    joinRoom(options: { roomId: string }): Promise<Room>;
    subscribeToRoomMultipart(options: { roomId: string; hooks?: RoomHooks; messageLimit?: number }): Promise<Room>;
    sendMultipartMessage(options: { roomId: string; parts: NewPart[] }): Promise<number>;
    isTypingIn(options: { roomId: string }): Promise<void>;
    setReadCursor(options: { roomId: string; position: number }): Promise<void>;
    readCursor(options: { roomId: string; userId?: string }): Cursor | undefined;
    disconnect(): void;
  }

  export class ChatManager {
    constructor(options: {
      instanceLocator: string;
      userId: string;
      tokenProvider: TokenProvider;
      baseClient?: BaseClient;
      logger?: Logger;
      connectionTimeout?: number;
    });
    connect(hooks?: GlobalHooks): Promise<CurrentUser>;
    disconnect(): void;
  }
}
