import { Module } from '@nestjs/common';
import { AccessTokenVerifier } from './authentication/access-token';
import { AccessTokenGuard } from './authentication/access-token.guard';
import { KeyRing } from './authentication/key-ring';
import { InstanceChanges } from './instance-changes';
import { CreateInstanceHandler } from './create-instance/create-instance.handler';
import { CreateKeyHandler } from './create-key/create-key.handler';
import { DisableKeyHandler } from './disable-key/disable-key.handler';
import { IssueTestTokenController, IssueTestTokenHandler } from './issue-test-token/issue-test-token';
import { ListInstancesHandler } from './list-instances/list-instances.handler';
import { SetInstanceEnabledHandler } from './set-instance-enabled/set-instance-enabled.handler';
import { SetTokenProviderHandler } from './set-token-provider/set-token-provider.handler';

/** Instances, their keys, request authentication and the test token provider. */
@Module({
  controllers: [IssueTestTokenController],
  providers: [
    KeyRing,
    InstanceChanges,
    AccessTokenVerifier,
    AccessTokenGuard,
    CreateInstanceHandler,
    CreateKeyHandler,
    DisableKeyHandler,
    SetInstanceEnabledHandler,
    SetTokenProviderHandler,
    ListInstancesHandler,
    IssueTestTokenHandler,
  ],
  exports: [KeyRing, AccessTokenVerifier, AccessTokenGuard],
})
export class InstancesModule {}
