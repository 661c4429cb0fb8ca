import { badRequest, notFound } from '../../../shared/domain/errors';

/** The files API (chatkit_files v1), used by chatkit-client for v2 "data attachments". */
export const FILES_ROUTE = 'services/chatkit_files/v1/:instanceId';

/** Seed: a stored file name uses only A-Z, a-z, 0-9, `.`, `_` and `-`. */
const FILE_NAME = /^[A-Za-z0-9._-]{1,255}$/;

export function assertFileName(fileName: string): void {
  if (!FILE_NAME.test(fileName) || fileName === '.' || fileName === '..') {
    throw badRequest('invalid_file_name', 'File names use only A-Z, a-z, 0-9, ".", "_" and "-" (at most 255 characters)');
  }
}

export const fileNotFound = (fileName: string) =>
  notFound('file_not_found', `The file "${fileName}" does not exist in this room`);
