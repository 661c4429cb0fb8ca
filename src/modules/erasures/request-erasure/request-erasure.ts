import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { IsNotEmpty, IsString, MaxLength } from '../../../shared/http/class-validator-parts';
import { auditActor, CurrentActor } from '../../instances/authentication/access-token.guard';
import { RequestActor } from '../../instances/authentication/access-token';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { USER_ID_MAX } from '../../users/presentation/user-fields.dto';
import { Erasures } from '../erasures';
import { PARLEY_ADMIN_ROUTE } from '../erasures-route';

export class ErasureRequestDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(USER_ID_MAX)
  user_id: string;
}

/**
 * `POST /erasures` `{user_id}`: erases the user (GDPR Art. 17), in the background; answers
 * 202 `{id, status}` once the request is in the log. `GET /erasures/:id` follows it.
 */
@Controller(PARLEY_ADMIN_ROUTE)
export class RequestErasureController {
  constructor(private readonly erasures: Erasures) {}

  @Post('erasures')
  @Requires(Access.su)
  @HttpCode(202)
  async request(@Param('instanceId') instanceId: string, @Body() body: ErasureRequestDto, @CurrentActor() actor: RequestActor) {
    return { id: await this.erasures.request(instanceId, body.user_id, auditActor(actor)), status: 'pending' };
  }
}
