import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import jwt from 'jsonwebtoken';
import { growingLru } from '../../../shared/growing-lru';
import { KeyObject } from 'node:crypto';
import passport from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import { DomainError, notFound } from '../../../shared/domain/errors';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { ActiveInstance, KeyRing } from './key-ring';
import { tokenLifetimeRefusal, tokenLivesTooLong } from './token-lifetime';
import { consoleUserProblem } from '../../../shared/domain/console-user';

/** Who a request acts as, from its verified token. */
export interface RequestActor {
  readonly instanceId: string;
  readonly keyId: string;
  readonly userId?: string;
  readonly su: boolean;
  /** The token's `iat` (seconds), when it has one: whether it was issued before its user was deleted. */
  readonly issuedAt?: number;
  /** The operator acting through the console, from the token's `console_user` claim (recorded as `Actor.console_user`). */
  readonly consoleUser?: string;
  /** The HTTP request it acts in (set per request by `@CurrentActor()`; absent on cached and socket actors). */
  readonly requestId?: string;
}

export const unauthorized = (reason: string, description: string) =>
  new DomainError('unauthorized', reason, description);

/** What the strategy reads from a request: HTTP (Fastify) and the transports' SUBSCRIBE requests alike. */
export interface TokenRequest {
  readonly headers: Readonly<Record<string, unknown>>;
  readonly params?: unknown;
}

const ISSUER = /^api_keys\/(.+)$/;
/** Verified tokens remembered, so a client's repeated calls skip the HMAC (bounded, least recent out). */
const VERIFIED_CACHE_SIZE = 10_000;
const bearerToken = ExtractJwt.fromAuthHeaderAsBearerToken();

interface Verified {
  readonly actor: RequestActor;
  readonly key: KeyObject;
  readonly expiresAtMs: number;
}

const instanceIdOf = (request: TokenRequest): string =>
  String((request.params as Record<string, unknown> | undefined)?.instanceId ?? '');

/**
 * The mixin registers a strategy under passport-jwt's generic name "jwt" in the process-wide
 * passport; each application registers its own under a name of its own instead (below), so two
 * servers in one process never verify with each other's keys.
 */
const UNUSED_REGISTRY = new passport.Passport();
let applications = 0;

/**
 * Verifies the HS256 access tokens the Pusher SDKs mint (wire study §5.1), as a passport-jwt
 * strategy: `iss` names the instance key whose secret signed it (`secretOrKeyProvider`),
 * `instance` must be the instance in the path, `exp` must lie ahead, and no further from the
 * token's issue than TOKEN_MAX_LIFETIME_SECONDS. HTTP routes reach it
 * through `AccessTokenGuard`, SUBSCRIBE and /ws frames through `AccessTokenVerifier`.
 */
@Injectable()
export class AccessTokenStrategy extends PassportStrategy(JwtStrategy) implements OnModuleDestroy {
  /** This application's name for the strategy in passport's registry. */
  override readonly name: string;
  private readonly verified = growingLru<string, Verified>(VERIFIED_CACHE_SIZE);
  /** The key each request's token was checked with, from `secretOrKeyProvider` to `validate`. */
  private readonly keyOfRequest = new WeakMap<object, KeyObject>();

  private readonly maxLifetimeSeconds: number;

  constructor(
    private readonly keyRing: KeyRing,
    @Inject(CONFIG) config: ParleyConfig,
  ) {
    super({
      jwtFromRequest: bearerToken,
      algorithms: ['HS256'],
      passReqToCallback: true,
      // jsonwebtoken takes the KeyObject (typed here as a Buffer): it does not reparse the secret each time.
      secretOrKeyProvider: (request: TokenRequest, token: string, done: (error: unknown, key?: Buffer) => void) => {
        this.keyFor(request, token).then((key) => done(null, key as unknown as Buffer), done);
      },
    });
    this.maxLifetimeSeconds = config.tokenMaxLifetimeSeconds;
    this.name = `parley-access-token-${++applications}`;
    passport.use(this.name, this);
  }

  getPassportInstance() {
    return UNUSED_REGISTRY;
  }

  onModuleDestroy(): void {
    passport.unuse(this.name);
  }

  /**
   * Answers from the verified-token cache when it can (an unexpired token for this instance,
   * its key still active), otherwise verifies with passport-jwt. An unknown instance is 404
   * before anything else, as before passport.
   */
  override authenticate(request: TokenRequest, options?: unknown): void {
    const instanceId = instanceIdOf(request);
    this.keyRing.instance(instanceId).then((instance) => {
      if (!instance) return this.fail(notFound('instance_not_found', `The instance "${instanceId}" does not exist`), 404);
      const hit = this.cachedFor(request, instance);
      if (hit) return this.success(hit);
      super.authenticate(request as never, options);
    }, (error: unknown) => this.error(error as Error));
  }

  /**
   * The caller as this strategy verified the same token before, while it is unexpired and its
   * key still active; undefined otherwise (then passport must run). Lets callers skip
   * passport's per-request machinery on the common path.
   */
  async cached(request: TokenRequest): Promise<RequestActor | undefined> {
    const instance = await this.keyRing.instance(instanceIdOf(request));
    return instance ? this.cachedFor(request, instance) : undefined;
  }

  private cachedFor(request: TokenRequest, instance: { keys: ReadonlyMap<string, KeyObject> }): RequestActor | undefined {
    const token = bearerToken(request as never);
    const hit = token ? this.verified.get(token) : undefined;
    const fresh =
      hit && hit.actor.instanceId === instanceIdOf(request) && hit.expiresAtMs > Date.now() && instance.keys.get(hit.actor.keyId) === hit.key;
    return fresh ? hit.actor : undefined;
  }

  private async keyFor(request: TokenRequest, token: string): Promise<KeyObject> {
    const instance = (await this.keyRing.instance(instanceIdOf(request))) as ActiveInstance;
    const decoded = jwt.decode(token, { json: true });
    const issuer = typeof decoded?.iss === 'string' ? ISSUER.exec(decoded.iss) : null;
    if (!issuer) throw unauthorized('invalid_token', 'The token has no "iss" claim of the form api_keys/<key_id>');
    const key = instance?.keys.get(issuer[1]);
    if (!key) throw unauthorized('invalid_token', 'The token was signed with an unknown or disabled key');
    this.keyOfRequest.set(request, key);
    return key;
  }

  /** Runs once passport-jwt has checked the signature, the algorithm and `exp` if present. */
  validate(request: TokenRequest, claims: jwt.JwtPayload): RequestActor {
    const instanceId = instanceIdOf(request);
    if (claims.instance !== instanceId) throw unauthorized('invalid_token', 'The token was issued for another instance');
    if (typeof claims.exp !== 'number') throw unauthorized('invalid_token', 'The token has no "exp" claim');
    const tooLong = tokenLifetimeRefusal(claims, this.maxLifetimeSeconds);
    if (tooLong) throw tokenLivesTooLong(tooLong);
    const consoleUser = claims.console_user as unknown;
    const badConsoleUser = consoleUser === undefined ? null : consoleUserProblem(consoleUser);
    if (badConsoleUser) throw unauthorized('invalid_token', `The token's "console_user" claim is not usable: ${badConsoleUser}`);
    const keyId = ISSUER.exec(String(claims.iss))![1];
    const actor: RequestActor = {
      instanceId,
      keyId,
      userId: typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined,
      su: claims.su === true,
      ...(typeof claims.iat === 'number' && { issuedAt: claims.iat }),
      ...(typeof consoleUser === 'string' && { consoleUser }),
    };
    const token = bearerToken(request as never)!;
    this.verified.set(token, { actor, key: this.keyOfRequest.get(request)!, expiresAtMs: claims.exp * 1000 });
    return actor;
  }
}

/**
 * What a failed authentication answers. passport reports a refusal as `info` (passport-jwt's
 * "No auth token", jsonwebtoken's errors, or the DomainErrors thrown above) and a fault as `error`.
 */
export function authenticationError(error: unknown, info: unknown): unknown {
  if (error) return error;
  if (info instanceof DomainError) return info;
  if (info instanceof jwt.TokenExpiredError) return unauthorized('token_expired', 'The token has expired');
  if (info instanceof jwt.JsonWebTokenError) return unauthorized('invalid_token', 'The token signature or claims are invalid');
  return unauthorized('missing_token', 'An Authorization header with a Bearer token is required');
}
