import { Injectable } from '@nestjs/common';

/** Whether this process should receive traffic. */
@Injectable()
export class Readiness {
  state: 'starting' | 'ready' | 'stopping' = 'starting';

  get ready(): boolean {
    return this.state === 'ready';
  }
}
