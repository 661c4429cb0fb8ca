import type { FastifyRequest } from 'fastify';
import { PassThrough, Readable } from 'node:stream';
import { badRequest, DomainError } from '../../../../shared/domain/errors';
import { MAX_ATTACHMENT_BYTES } from '../../domain/attachment.decider';

/** The files API's form field that holds the file (seed: "form key `file` holds the file"). */
export const FILE_FIELD = 'file';

/** The files API answers every user error with 400 (seed), an oversize file included. */
export const fileTooLarge = () =>
  badRequest('file_too_large', `Files are limited to ${MAX_ATTACHMENT_BYTES} bytes (5 MiB)`);

const malformed = (error: unknown): DomainError => {
  if (error instanceof DomainError) return error;
  if ((error as { code?: string })?.code === 'FST_REQ_FILE_TOO_LARGE') return fileTooLarge();
  const detail = error instanceof Error && error.message ? `: ${error.message}` : '';
  return badRequest('malformed_multipart', `The body is not a well-formed multipart/form-data form (RFC 2388)${detail}`);
};

export interface FilePart {
  /** The file's bytes; a parse failure surfaces here as a 400 DomainError. */
  readonly stream: Readable;
  readonly contentType: string;
}

/**
 * A files API upload form, read in order: `open` finds the part named `file` (other fields
 * are skipped), `finish` reads the rest of the form and refuses a second `file`. Whatever
 * the parser rejects (no or wrong boundary, a truncated body, a parser limit) becomes a 400
 * `malformed_multipart`, never a 500, while storage failures keep their own errors.
 */
export class FileForm {
  private readonly parts: AsyncIterator<{ type: 'file' | 'field'; fieldname: string; file?: Readable; mimetype?: string }>;

  constructor(request: FastifyRequest) {
    if (!request.isMultipart()) {
      throw badRequest('not_multipart', `The upload must be multipart/form-data with the file in a part named "${FILE_FIELD}"`);
    }
    try {
      this.parts = request.parts() as unknown as FileForm['parts'];
    } catch (error) {
      throw malformed(error);
    }
  }

  private async next() {
    try {
      const { done, value } = await this.parts.next();
      return done ? null : value;
    } catch (error) {
      throw malformed(error);
    }
  }

  async open(): Promise<FilePart | null> {
    for (let part = await this.next(); part; part = await this.next()) {
      if (part.type !== 'file') continue;
      if (part.fieldname === FILE_FIELD) {
        return { stream: withBadRequestErrors(part.file!), contentType: part.mimetype || 'application/octet-stream' };
      }
      part.file!.resume();
    }
    return null;
  }

  async finish(): Promise<void> {
    for (let part = await this.next(); part; part = await this.next()) {
      if (part.type !== 'file') continue;
      if (part.fieldname === FILE_FIELD) {
        part.file!.resume();
        throw badRequest('more_than_one_file', `The form holds more than one part named "${FILE_FIELD}"; send one file per upload`);
      }
      part.file!.resume();
    }
  }
}

/** The parser's errors on a file's bytes, as the 400 they are. */
function withBadRequestErrors(source: Readable): Readable {
  const out = new PassThrough();
  source.on('error', (error) => out.destroy(malformed(error)));
  return source.pipe(out);
}
