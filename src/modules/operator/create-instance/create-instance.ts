import { Body, Controller, Inject, Post } from '@nestjs/common';
import { CommandBus, QueryBus } from '@nestjs/cqrs';
import { ApiDoc } from '../../api-docs/swagger-library';
import { IsOptional, IsString, Matches } from '../../../shared/http/class-validator-parts';
import { randomUUID } from 'node:crypto';
import { CONFIG, ParleyConfig } from '../../../config/config';
import { conflict } from '../../../shared/domain/errors';
import { Actor } from '../../../shared/domain/event';
import { INSTANCE_ID_PATTERN } from '../../../shared/domain/streams';
import { CurrentOperatorActor } from '../../instances/authentication/access-token.guard';
import { CreateInstanceCommand, CreatedKey, CreateKeyCommand, GetInstanceQuery, InstanceSummary } from '../../instances/instance-administration';
import { Access } from '../../roles/access-rules';
import { Requires } from '../../roles/requires.decorator';
import { INSTANCE_SCHEMA, InstanceView, NEW_KEY_SCHEMA, presentInstance } from '../instance-view';
import { PARLEY_OPERATOR_ROUTE } from '../operator-route';

/** Cluster names go into locators (`v1:<cluster>:<id>`), so no `:`. */
const CLUSTER_PATTERN = /^[A-Za-z0-9-]{1,64}$/;

export class CreateInstanceDto {
  @IsString()
  @Matches(INSTANCE_ID_PATTERN, { message: 'id uses only A-Z, a-z, 0-9 and "-", at most 64 characters' })
  id: string;

  @IsOptional()
  @IsString()
  @Matches(CLUSTER_PATTERN, { message: 'cluster uses only A-Z, a-z, 0-9 and "-", at most 64 characters' })
  cluster?: string;
}

/**
 * `POST /instances` `{id, cluster?}`: creates the instance with a first key, answered 201 with
 * the key's secret (shown this once). The cluster defaults to the bootstrap instance's, else
 * `local`. An existing instance is answered 409 and left as it is.
 */
@Controller(PARLEY_OPERATOR_ROUTE)
export class CreateInstanceController {
  constructor(
    private readonly commands: CommandBus,
    private readonly queries: QueryBus,
    @Inject(CONFIG) private readonly config: ParleyConfig,
  ) {}

  @Post('instances')
  @Requires(Access.operator)
  @ApiDoc((swagger) => swagger.ApiCreatedResponse({
    description: 'The instance, with its first key and that key\'s secret',
    schema: { allOf: [INSTANCE_SCHEMA, { type: 'object', required: ['key'], properties: { key: NEW_KEY_SCHEMA } }] },
  }))
  async create(@Body() body: CreateInstanceDto, @CurrentOperatorActor() actor: Actor): Promise<InstanceView & { key: { id: string; secret: string } }> {
    const cluster = body.cluster ?? this.config.bootstrap?.cluster ?? 'local';
    const created = await this.commands.execute<CreateInstanceCommand, boolean>(new CreateInstanceCommand(body.id, cluster, actor));
    if (!created) throw conflict('instance_exists', `The instance "${body.id}" already exists; nothing changed`);
    const key = await this.commands.execute<CreateKeyCommand, CreatedKey>(new CreateKeyCommand(body.id, randomUUID(), undefined, actor));
    const instance = await this.queries.execute<GetInstanceQuery, InstanceSummary>(new GetInstanceQuery(body.id));
    return { ...presentInstance(instance), key: { id: key.keyId, secret: key.secret } };
  }
}
