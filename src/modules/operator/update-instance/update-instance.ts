import { Body, Controller, Param, Put } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import { IsBoolean, IsOptional } from '../../../shared/http/class-validator-parts';
import { Actor } from '../../../shared/domain/event';
import { CurrentOperatorActor } from '../../instances/authentication/access-token.guard';
import { GetInstanceQuery, InstanceSummary, SetInstanceEnabledCommand, SetTokenProviderCommand } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { INSTANCE_SCHEMA, InstanceView, presentInstance } from '../instance-view';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

export class UpdateInstanceDto {
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @IsOptional()
  @IsBoolean()
  token_provider_enabled?: boolean;
}

/**
 * `PUT /instances/:instanceId` `{enabled?, token_provider_enabled?}`: switches the instance
 * (disabled: every call to it answers 404, its data kept) and its test token provider; what is
 * absent stays as it is. Answers the instance.
 */
@Controller(PARLEY_OPERATOR_ROUTE)
export class UpdateInstanceController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
  ) {}

  @Put('instances/:instanceId')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiOkResponse({ description: 'The instance as it is now', schema: INSTANCE_SCHEMA }))
  async update(@Param('instanceId') instanceId: string, @Body() body: UpdateInstanceDto, @CurrentOperatorActor() actor: Actor): Promise<InstanceView> {
    await this.queries.execute(new GetInstanceQuery(instanceId)); // 404 before any change
    if (body.enabled !== undefined) await this.commands.execute(new SetInstanceEnabledCommand(instanceId, body.enabled, actor));
    if (body.token_provider_enabled !== undefined) await this.commands.execute(new SetTokenProviderCommand(instanceId, body.token_provider_enabled, actor));
    return presentInstance(await this.queries.execute<GetInstanceQuery, InstanceSummary>(new GetInstanceQuery(instanceId)));
  }
}
