import { Controller, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import { randomUUID } from 'node:crypto';
import { Actor } from '../../../shared/domain/event';
import { CurrentOperatorActor } from '../../instances/authentication/access-token.guard';
import { CreatedKey, CreateKeyCommand } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { NEW_KEY_SCHEMA } from '../instance-view';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

/** `POST /instances/:instanceId/keys`: a new key with a generated secret, answered 201 `{id, secret}` (the secret shown this once). */
@Controller(PARLEY_OPERATOR_ROUTE)
export class CreateKeyController {
  constructor(private readonly commands: CommandBus) {}

  @Post('instances/:instanceId/keys')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiCreatedResponse({ description: 'The key and its secret', schema: NEW_KEY_SCHEMA }))
  async create(@Param('instanceId') instanceId: string, @CurrentOperatorActor() actor: Actor): Promise<{ id: string; secret: string }> {
    const key = await this.commands.execute<CreateKeyCommand, CreatedKey>(new CreateKeyCommand(instanceId, randomUUID(), undefined, actor));
    return { id: key.keyId, secret: key.secret };
  }
}
