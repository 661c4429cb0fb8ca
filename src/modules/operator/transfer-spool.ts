import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG, ParleyConfig } from '../../config/config';
import { DomainError } from '../../shared/domain/errors';
import { makePrivateDir } from '../../shared/files/private-files';

/** Under DATA_DIR: where an export is written before it is sent, and an uploaded archive unpacked before it is imported. */
export const TRANSFER_SPOOL_DIR = 'transfer-spool';

/**
 * The spool of the operator API's exports and imports: one private directory per transfer,
 * deleted as soon as the transfer ends, however it ends (it holds an instance's content, and
 * deleting means gone). Whatever a stopped process left there is deleted at start.
 */
@Injectable()
export class TransferSpool implements OnModuleInit {
  readonly root: string;

  constructor(@Inject(CONFIG) config: ParleyConfig) {
    this.root = join(config.dataDir, TRANSFER_SPOOL_DIR);
  }

  onModuleInit(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  /** A new directory's path (not made yet: its writer makes it). */
  next(kind: 'export' | 'import', id: string = randomUUID()): string {
    makePrivateDir(this.root);
    return join(this.root, `${kind}-${id}`);
  }

  remove(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
  }

  /** A full disk under the spool as the caller should read it (503: nothing was kept); any other error as it is. */
  static failure(error: unknown): unknown {
    const code = (error as NodeJS.ErrnoException)?.code;
    if (code !== 'ENOSPC' && code !== 'EDQUOT') return error;
    return new DomainError('unavailable', 'spool_full', `The disk of DATA_DIR has no room for the transfer's spool (${TRANSFER_SPOOL_DIR}): nothing was kept; free some space and try again`);
  }
}
