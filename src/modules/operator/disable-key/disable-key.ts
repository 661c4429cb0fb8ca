import { Body, Controller, Param, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import { IsBoolean } from '../../../shared/http/class-validator-parts';
import { unprocessable } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { CurrentOperatorActor } from '../../instances/authentication/access-token.guard';
import { DisableKeyCommand } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

export class KeyStateDto {
  @IsBoolean()
  enabled: boolean;
}

/**
 * `PUT /instances/:instanceId/keys/:keyId` `{enabled: false}`: disables the key; every token it
 * signed is refused from then on. A disabled key stays disabled (make a new one instead).
 */
@Controller(PARLEY_OPERATOR_ROUTE)
export class DisableKeyController {
  constructor(private readonly commands: CommandBus) {}

  @Put('instances/:instanceId/keys/:keyId')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiOkResponse({
    description: 'The key as it is now',
    schema: { type: 'object', required: ['id', 'enabled'], properties: { id: { type: 'string' }, enabled: { type: 'boolean', enum: [false] } } },
  }))
  async disable(
    @Param('instanceId') instanceId: string,
    @Param('keyId') keyId: string,
    @Body() body: KeyStateDto,
    @CurrentOperatorActor() actor: Actor,
  ): Promise<{ id: string; enabled: false }> {
    if (body.enabled) throw unprocessable('key_stays_disabled', 'A key can only be disabled (enabled: false); create a new key instead');
    await this.commands.execute(new DisableKeyCommand(instanceId, keyId, actor));
    return { id: keyId, enabled: false };
  }
}
