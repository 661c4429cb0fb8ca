import { Module } from '@nestjs/common';
import { AuthModuleOptions } from '@nestjs/passport';
import { AccessTokenVerifier } from './authentication/access-token';
import { AccessTokenGuard } from './authentication/access-token.guard';
import { AccessTokenStrategy } from './authentication/access-token.strategy';
import { KeyRing } from './authentication/key-ring';
import { TokenStanding } from './authentication/token-standing';
import { OperatorTokenVerifier } from './authentication/operator-token';
import { InstanceChanges } from './instance-changes';
import { CredentialWarnings } from './credential-warnings';
import { CreateInstanceHandler } from './create-instance/create-instance.handler';
import { CreateKeyHandler } from './create-key/create-key.handler';
import { DisableKeyHandler } from './disable-key/disable-key.handler';
import { IssueTestTokenController, IssueTestTokenHandler } from './issue-test-token/issue-test-token';
import { ListInstancesHandler } from './list-instances/list-instances.handler';
import { GetInstanceHandler } from './get-instance/get-instance.handler';
import { RecordExportHandler } from './record-export/record-export.handler';
import { SetInstanceEnabledHandler } from './set-instance-enabled/set-instance-enabled.handler';
import { SetTokenProviderHandler } from './set-token-provider/set-token-provider.handler';

/** Instances, their keys, request authentication and the test token provider. */
@Module({
  controllers: [IssueTestTokenController],
  providers: [
    KeyRing,
    InstanceChanges,
    AccessTokenStrategy,
    // AccessTokenGuard (an @nestjs/passport AuthGuard) runs this application's strategy and puts the caller on request.actor.
    {
      provide: AuthModuleOptions,
      useFactory: (strategy: AccessTokenStrategy) => ({ defaultStrategy: strategy.name, property: 'actor', session: false }),
      inject: [AccessTokenStrategy],
    },
    AccessTokenVerifier,
    AccessTokenGuard,
    TokenStanding,
    OperatorTokenVerifier,
    CredentialWarnings,
    CreateInstanceHandler,
    CreateKeyHandler,
    DisableKeyHandler,
    SetInstanceEnabledHandler,
    SetTokenProviderHandler,
    ListInstancesHandler,
    GetInstanceHandler,
    RecordExportHandler,
    IssueTestTokenHandler,
  ],
  exports: [KeyRing, AccessTokenVerifier, AccessTokenGuard, AccessTokenStrategy, AuthModuleOptions, TokenStanding, OperatorTokenVerifier, CredentialWarnings],
})
export class InstancesModule {}
