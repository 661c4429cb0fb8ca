import { Controller, Get, Param, Query } from '@nestjs/common';
import { forbidden, unprocessable } from '../../../shared/domain/errors';
import { CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { KeyRing } from '../../instances/authentication/key-ring';
import { signBeamsToken } from '../devices/beams-token';
import { isBeamsUserId, MAX_USER_ID_BYTES } from '../publish/publish-request';
import { instanceNotFound } from '../secret-key-check';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';

/**
 * `chatkit_beams_token_provider/v1`: chatkit-client's `enablePushNotifications` asks it for a
 * Beams token for the connected user and hands it to the Web SDK's `setUserId`. A user token
 * gets a token for its own user only; the token is signed with the key that signed the
 * request's token (an enabled key of the instance), as `generateToken` would sign it.
 */
@Controller('services/chatkit_beams_token_provider/v1/:instanceId')
export class IssueBeamsTokenController {
  constructor(private readonly keyRing: KeyRing) {}

  @Get('beams-tokens')
  @Requires(Access.authenticated)
  async issue(
    @Param('instanceId') instanceId: string,
    @Query('user_id') userId: unknown,
    @CurrentActor() actor: RequestActor,
  ): Promise<{ token: string }> {
    if (!isBeamsUserId(userId)) throw unprocessable('invalid_user_id', `user_id must be 1 to ${MAX_USER_ID_BYTES} bytes of UTF-8`);
    if (actor.userId !== userId) throw forbidden('other_user', 'A Beams token is issued only for the user of the access token');
    const key = (await this.keyRing.instance(instanceId))?.keys.get(actor.keyId);
    if (!key) throw instanceNotFound(instanceId);
    return { token: signBeamsToken(userId, instanceId, key) };
  }
}
