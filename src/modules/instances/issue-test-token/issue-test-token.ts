import { Body, Controller, HttpCode, Param, Post, Query } from '@nestjs/common';
import { IQueryHandler, QueryBus, QueryHandler } from '@nestjs/cqrs';
import jwt from 'jsonwebtoken';
import { badRequest, notFound } from '../../../shared/domain/errors';
import { KeyRing } from '../authentication/key-ring';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/** Tokens of the test token provider live a day, like chatkit-server's. */
export const TEST_TOKEN_TTL_SECONDS = 86_400;

export interface TestToken {
  access_token: string;
  user_id: string;
  token_type: 'access_token';
  expires_in: number;
}

export class IssueTestTokenQuery {
  constructor(
    readonly instanceId: string,
    readonly userId: string,
  ) {}
}

/** Signs a user token with the instance's first active key, when the provider is switched on. */
@QueryHandler(IssueTestTokenQuery)
export class IssueTestTokenHandler implements IQueryHandler<IssueTestTokenQuery, TestToken> {
  constructor(private readonly keyRing: KeyRing) {}

  async execute({ instanceId, userId }: IssueTestTokenQuery): Promise<TestToken> {
    const instance = await this.keyRing.instance(instanceId);
    const key = instance?.tokenProviderEnabled ? [...instance.keys][0] : undefined;
    if (!key) {
      throw notFound('instance_not_found', `No test token provider is enabled for the instance "${instanceId}"`);
    }
    const [keyId, secret] = key;
    const access_token = jwt.sign({ instance: instanceId, iss: `api_keys/${keyId}`, sub: userId }, secret, {
      algorithm: 'HS256',
      expiresIn: TEST_TOKEN_TTL_SECONDS,
    });
    return { access_token, user_id: userId, token_type: 'access_token', expires_in: TEST_TOKEN_TTL_SECONDS };
  }
}

/**
 * The test token provider (seed: token provider v1). It takes `user_id` from the query or
 * from a JSON body with `grant_type: client_credentials`, and also the form body
 * (`grant_type=client_credentials`, user id in the query) that chatkit-client's TokenProvider sends.
 */
@Controller('services/chatkit_token_provider/v1/:instanceId')
export class IssueTestTokenController {
  constructor(private readonly queries: QueryBus) {}

  @Post('token')
  @Requires(Access.public)
  @HttpCode(200)
  issue(
    @Param('instanceId') instanceId: string,
    @Query() query: Record<string, unknown>,
    @Body() body: unknown,
  ): Promise<TestToken> {
    const form = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body))) {
      throw badRequest('invalid_body', 'The body must be a JSON object or a form');
    }
    if (query.user_id !== undefined && form.user_id !== undefined) {
      throw badRequest('ambiguous_user_id', 'Give user_id in the query string or in the body, not both');
    }
    // The seed: a body carries grant_type client_credentials; a missing or other one is a user error (400).
    if (Object.keys(form).length > 0 && form.grant_type !== 'client_credentials') {
      throw badRequest('invalid_grant_type', 'grant_type must be client_credentials');
    }
    const userId = query.user_id ?? form.user_id;
    if (typeof userId !== 'string' || userId === '') throw badRequest('missing_user_id', 'user_id is required');
    if (userId.length >= 60 || /\s/.test(userId)) {
      throw badRequest('invalid_user_id', 'user_id must be fewer than 60 characters with no spaces');
    }
    return this.queries.execute(new IssueTestTokenQuery(instanceId, userId));
  }
}
