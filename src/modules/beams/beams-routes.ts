import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { CLOCK } from '../../shared/application/tokens';
import { Clock } from '../../shared/domain/clock';
import { badRequest, DomainError } from '../../shared/domain/errors';
import { DeleteBeamsUser } from './delete-user/delete-beams-user';
import { WebPushProvider } from './delivery/web-push-provider';
import { BEAMS_PLATFORMS, Devices, isDeviceOf } from './devices/devices';
import { deviceNotFound } from './domain/beams-device.decider';
import type { BeamsPlatform } from './domain/beams-device.events';
import { Publish, TooManyPublishes } from './publish/publish';
import { interestsPublish, requireJsonObject, usersPublish } from './publish/publish-request';
import { SecretKeyCheck } from './secret-key-check';
import { bearerCredential } from '../../shared/http/bearer';
import { unfitJsonBody } from '../../shared/http/body-parser';
import { Access } from '../roles/access-rules';
import { idempotentFastifyRoutes } from '../idempotency/idempotent-fastify-routes';
import { IdempotentRequests } from '../idempotency/idempotent-requests';

/** Body limits of the publish API (seed, Limits). */
export const INTERESTS_BODY_LIMIT = 10 * 1024;
export const USERS_BODY_LIMIT = 200 * 1024;

type Params = { instanceId?: string; userId?: string; deviceId?: string; interest?: string };

/** Device API bodies are small (a push subscription, up to 100 interests). */
const DEVICE_BODY_LIMIT = 32 * 1024;

/** Beams error bodies: `{error, description}`, never empty (the SDK hangs on an empty error body). */
interface BeamsErrorBody {
  readonly error: string;
  readonly description: string;
}

const beamsError = (error: unknown): { status: number; body: BeamsErrorBody } | null => {
  if (error instanceof DomainError) return { status: error.status, body: { error: error.code, description: error.description } };
  const status = (error as { statusCode?: number })?.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  const code = (error as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { status: 400, body: { error: 'bad_request/body_too_large', description: 'The request body is larger than this call accepts' } };
  }
  // Anything else the framework refuses about the request (a bad Content-Length, an unknown media type) is a 400.
  return { status: 400, body: { error: 'bad_request/malformed_request', description: 'The request could not be read' } };
};

const BEAMS_API_PATH = /^\/(publish|user|device)_api\//;

/** A Beams-shaped answer for an error raised outside the Beams routes' own handler (the drain's refusal); null for other paths. */
export const beamsErrorFor = (url: string, error: DomainError): { status: number; body: BeamsErrorBody } | null =>
  BEAMS_API_PATH.test(url) ? beamsError(error) : null;

/** What the routes declare (see `AccessRule`): the server SDK's calls carry the key secret, the device API nothing. */
const SECRET_KEY = {
  config: { access: Access.ownCredential('the instance key secret as Bearer, as the Beams server SDKs send it, or an su access token of the instance (SecretKeyCheck)') },
};
const NO_CREDENTIAL = { config: { access: Access.public } };
const BEAMS_TOKEN = { config: { access: Access.ownCredential('a Beams token naming the user (beamsTokenUser)') } };

const isJson = (contentType: string | undefined) => /^application\/json\s*(;|$)/i.test(contentType ?? '');

/**
 * The Beams publish API v1 (`/publish_api/v1/instances/<id>/publishes/interests|users`) and
 * `DELETE /user_api/v1/instances/<id>/users/<user>`, as `@pusher/push-notifications-server`
 * calls them. They live in encapsulated Fastify plugins, not Nest controllers, because the
 * seed fixes an order of precedence that crosses body parsing (the content type, the instance
 * id and the Authorization header come before the body's size, which comes before its
 * syntax), each call has its own body limit, and Beams errors are `{error, description}`.
 */
@Injectable()
export class BeamsRoutes implements OnModuleInit {
  private readonly logger = new Logger('beams');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly keys: SecretKeyCheck,
    private readonly publish: Publish,
    private readonly deleteUser: DeleteBeamsUser,
    private readonly devices: Devices,
    private readonly webPush: WebPushProvider,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly idempotentRequests: IdempotentRequests,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter?.getInstance?.() as FastifyInstance | undefined;
    if (typeof fastify?.register !== 'function') return;
    void fastify.register((scope, _options, done) => done(this.publishRoutes(scope)), { prefix: '/publish_api/v1' });
    void fastify.register((scope, _options, done) => done(this.userRoutes(scope)), { prefix: '/user_api/v1' });
    void fastify.register((scope, _options, done) => done(this.deviceRoutes(scope)), { prefix: '/device_api/v1' });
  }

  private publishRoutes(scope: FastifyInstance): undefined {
    this.commonHandling(scope);
    idempotentFastifyRoutes(scope, this.idempotentRequests);
    scope.addHook('onRequest', async (request) => {
      if (!isJson(request.headers['content-type'])) {
        throw badRequest('invalid_content_type', 'The Content-Type must be application/json');
      }
      this.authorizationPresent(request);
    });
    const route = (kind: 'interests' | 'users', bodyLimit: number, parse: typeof interestsPublish) =>
      scope.post<{ Params: Params }>(`/instances/:instanceId/publishes/${kind}`, { bodyLimit, ...SECRET_KEY }, async (request, reply) => {
        const body = requireJsonObject(request.body);
        const actor = await this.keys.actorFor(request.params.instanceId!, request.headers.authorization, request.id);
        const publishId = await this.publish.accept(request.params.instanceId!, parse(body), actor, this.clock.now());
        // Returned: the send completes after the (asynchronous) idempotency onSend hook.
        return reply.status(200).send({ publishId });
      });
    route('interests', INTERESTS_BODY_LIMIT, interestsPublish);
    route('users', USERS_BODY_LIMIT, usersPublish);
    return undefined;
  }

  private userRoutes(scope: FastifyInstance): undefined {
    this.commonHandling(scope);
    idempotentFastifyRoutes(scope, this.idempotentRequests);
    scope.addHook('onRequest', async (request) => this.authorizationPresent(request));
    scope.delete<{ Params: Params }>('/instances/:instanceId/users/:userId', SECRET_KEY, async (request, reply) => {
      const actor = await this.keys.actorFor(request.params.instanceId!, request.headers.authorization, request.id);
      await this.deleteUser.delete(request.params.instanceId!, request.params.userId ?? '', actor, this.clock.now());
      return reply.status(200).send();
    });
    return undefined;
  }

  /**
   * The device API as the Web, iOS and Android SDKs call it (`…/devices/web|apns|fcm`): no
   * credential, like Beams; a device id is an unguessable `<platform>-<uuid>` returned at
   * registration, and a path of another platform does not find it.
   */
  private deviceRoutes(scope: FastifyInstance): undefined {
    this.commonHandling(scope);
    const base = '/instances/:instanceId';
    scope.get<{ Params: Params }>(`${base}/web-vapid-public-key`, NO_CREDENTIAL, async (request, reply) => {
      await this.devices.requireInstance(request.params.instanceId!);
      void reply.status(200).send({ vapidPublicKey: this.webPush.vapidPublicKey });
    });
    for (const platform of BEAMS_PLATFORMS) this.platformDeviceRoutes(scope, platform);
    return undefined;
  }

  private platformDeviceRoutes(scope: FastifyInstance, platform: BeamsPlatform): void {
    const devices = `/instances/:instanceId/devices/${platform}`;
    const device = `${devices}/:deviceId`;
    const body = (request: FastifyRequest) => (request.body === undefined ? {} : requireJsonObject(request.body));
    /** The path's instance and device, once the device id is one of this platform's. */
    const target = (request: FastifyRequest<{ Params: Params }>): [string, string] => {
      if (!isDeviceOf(platform, request.params.deviceId!)) throw deviceNotFound();
      return [request.params.instanceId!, request.params.deviceId!];
    };
    scope.post<{ Params: Params }>(devices, { bodyLimit: DEVICE_BODY_LIMIT, ...NO_CREDENTIAL }, async (request, reply) => {
      const { metadata, ...registration } = requireJsonObject(request.body) as { token?: unknown; bundleIdentifier?: unknown; metadata?: { sdkVersion?: unknown } };
      const id = await this.devices.register(request.params.instanceId!, platform, registration, metadata?.sdkVersion, this.clock.now(), request.id);
      // The mobile SDKs read `initialInterestSet` (interests carried over from an earlier registration: none here).
      void reply.status(200).send(platform === 'web' ? { id } : { id, initialInterestSet: [] });
    });
    scope.delete<{ Params: Params }>(device, NO_CREDENTIAL, async (request, reply) => {
      await this.devices.delete(...target(request), 'stopped', this.clock.now(), request.id);
      void reply.status(200).send({});
    });
    scope.put<{ Params: Params }>(`${device}/metadata`, { bodyLimit: DEVICE_BODY_LIMIT, ...NO_CREDENTIAL }, async (request, reply) => {
      await this.devices.updateMetadata(...target(request), body(request).sdkVersion, this.clock.now(), request.id);
      void reply.status(200).send({});
    });
    if (platform === 'fcm') {
      scope.put<{ Params: Params }>(`${device}/token`, { bodyLimit: DEVICE_BODY_LIMIT, ...NO_CREDENTIAL }, async (request, reply) => {
        await this.devices.changeToken(...target(request), body(request).token, this.clock.now(), request.id);
        void reply.status(200).send({});
      });
    }
    scope.put<{ Params: Params }>(`${device}/user`, { bodyLimit: DEVICE_BODY_LIMIT, ...BEAMS_TOKEN }, async (request, reply) => {
      const token = bearerCredential(request.headers.authorization);
      await this.devices.setUser(...target(request), token, this.clock.now(), request.id);
      void reply.status(200).send({});
    });
    scope.get<{ Params: Params }>(`${device}/interests`, NO_CREDENTIAL, async (request, reply) => {
      const interests = await this.devices.interests(...target(request));
      void reply.status(200).send({ interests, responseMetadata: {} });
    });
    scope.put<{ Params: Params }>(`${device}/interests`, { bodyLimit: DEVICE_BODY_LIMIT, ...NO_CREDENTIAL }, async (request, reply) => {
      await this.devices.setInterests(...target(request), body(request).interests, this.clock.now(), request.id);
      void reply.status(200).send({});
    });
    scope.post<{ Params: Params }>(`${device}/interests/:interest`, NO_CREDENTIAL, async (request, reply) => {
      await this.devices.addInterest(...target(request), request.params.interest!, this.clock.now(), request.id);
      void reply.status(200).send({});
    });
    scope.delete<{ Params: Params }>(`${device}/interests/:interest`, NO_CREDENTIAL, async (request, reply) => {
      await this.devices.removeInterest(...target(request), request.params.interest!, this.clock.now(), request.id);
      void reply.status(200).send({});
    });
  }

  /** 400 when the path has no instance id or the request no secret key, in the seed's order. */
  private authorizationPresent(request: FastifyRequest): void {
    const instanceId = (request.params as Params | undefined)?.instanceId;
    if (instanceId !== undefined && instanceId === '') throw missingInstance();
    if (bearerCredential(request.headers.authorization) === null) {
      throw badRequest('missing_authorization', 'The Authorization header must be "Bearer <secret key>"');
    }
  }

  /** JSON bodies only, Beams-shaped errors, and a Beams-shaped 404 for anything else under the prefix. */
  private commonHandling(scope: FastifyInstance): void {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, text, done) => {
      if ((text as string).trim() === '') return done(null, undefined);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text as string);
      } catch {
        return done(badRequest('invalid_json', 'The request body is not valid JSON') as unknown as Error, undefined);
      }
      done(unfitJsonBody(text as string, parsed) as unknown as Error, parsed);
    });
    scope.setErrorHandler((error, request, reply) => this.answerError(error, request, reply));
    scope.setNotFoundHandler((request, reply) => {
      const missing = /^\/(publish|user|device)_api\/v1\/instances(\/\/|\/?$|\/?\?)/.test(request.url);
      const error = missing ? missingInstance() : new DomainError('not_found', 'route_not_found', `No route serves ${request.url.split('?')[0]}`);
      this.answerError(error, request, reply);
    });
  }

  private answerError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const answer = beamsError(error);
    if (!answer || answer.status >= 500) this.logger.error(`${request.method} ${request.url.split('?')[0]} failed`, (error as Error)?.stack);
    const { status, body } = answer ?? {
      status: 500,
      body: { error: 'internal_error/unexpected', description: 'An unexpected error occurred' },
    };
    if (error instanceof TooManyPublishes) void reply.header('retry-after', String(error.retryAfterSeconds));
    void reply.status(status).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}

const missingInstance = () => badRequest('missing_instance_id', 'The path must name the instance: /instances/<instance id>/…');
