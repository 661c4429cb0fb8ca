import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { Inject } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { CommandPipeline } from '../../../shared/application/write-path/command-pipeline';
import { SECRET_BOX, SecretBox, SealedSecret } from '../../../shared/crypto/secret-box';
import { badRequest, DomainError } from '../../../shared/domain/errors';
import { keySecretTooShort } from '../../../shared/crypto/key-secret';
import { Actor } from '../../../shared/domain/event';
import { instanceDecider, instanceStream } from '../domain/instance.decider';
import { InstanceChanges } from '../instance-changes';

export class CreateKeyCommand {
  constructor(
    readonly instanceId: string,
    readonly keyId: string,
    /** Generated when omitted. */
    readonly secret: string | undefined,
    readonly actor: Actor,
    /** Bootstrap mode: a key that exists with this very secret is fine. */
    readonly ifAbsent = false,
  ) {}
}

export interface CreatedKey {
  readonly keyId: string;
  readonly secret: string;
  readonly created: boolean;
}

/** Adds a key to an instance. The secret is sealed with the master key before it is logged. */
@CommandHandler(CreateKeyCommand)
export class CreateKeyHandler implements ICommandHandler<CreateKeyCommand, CreatedKey> {
  constructor(
    private readonly pipeline: CommandPipeline,
    private readonly changes: InstanceChanges,
    @Inject(SECRET_BOX) private readonly box: SecretBox,
  ) {}

  async execute(command: CreateKeyCommand): Promise<CreatedKey> {
    const { instanceId, keyId, actor, ifAbsent } = command;
    const secret = command.secret ?? randomBytes(32).toString('base64url');
    const tooShort = keySecretTooShort(secret);
    if (tooShort) throw badRequest('weak_key_secret', `The key "${keyId}" was not created: ${tooShort}`);
    if (ifAbsent) {
      const { state } = await this.pipeline.load(instanceStream(instanceId), instanceDecider);
      const existing = state.keys.get(keyId);
      if (existing) {
        if (this.box.open(existing.secret as SealedSecret) !== secret) {
          throw new DomainError(
            'conflict',
            'key_secret_mismatch',
            `The key "${keyId}" of instance "${instanceId}" exists with another secret; disable it and use a new key id`,
          );
        }
        return { keyId, secret, created: false };
      }
    }
    await this.changes.apply({ type: 'CreateKey', id: instanceId, keyId, secret: this.box.seal(secret) }, actor);
    return { keyId, secret, created: true };
  }
}
