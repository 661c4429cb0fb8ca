/**
 * What other contexts use to administer instances (the operator API): the commands and queries
 * of this module's use cases, whose handlers the module registers.
 */
export { CreateInstanceCommand } from './create-instance/create-instance.handler';
export { CreateKeyCommand, type CreatedKey } from './create-key/create-key.handler';
export { DisableKeyCommand } from './disable-key/disable-key.handler';
export { GetInstanceQuery } from './get-instance/get-instance.handler';
export { RecordExportCommand } from './record-export/record-export.handler';
export { ListInstancesQuery, type InstanceSummary, type InstancesPage } from './list-instances/list-instances.handler';
export { SetInstanceEnabledCommand } from './set-instance-enabled/set-instance-enabled.handler';
export { SetTokenProviderCommand } from './set-token-provider/set-token-provider.handler';
