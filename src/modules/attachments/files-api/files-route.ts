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

const FILES_PATH = /^\/services\/chatkit_files\/v1\/([^/?#]+)\/rooms\/([^/?#]+)\/files\/([^/?#]+)$/;

/** The get-file call of a file: what an upload answers as its `resource_link`. */
export const fileAddress = (origin: string, instanceId: string, roomId: string, fileName: string): string =>
  `${origin}/services/chatkit_files/v1/${encodeURIComponent(instanceId)}/rooms/${encodeURIComponent(roomId)}/files/${encodeURIComponent(fileName)}`;

/**
 * The instance, room and file a get-file address names, or null for any other link. The
 * host is not compared: a server reached under several names (or behind a proxy) hands out
 * addresses under each of them.
 */
export function parseFileAddress(link: string): { instanceId: string; roomId: string; fileName: string } | null {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const match = FILES_PATH.exec(url.pathname);
  if (!match) return null;
  try {
    const [instanceId, roomId, fileName] = match.slice(1).map(decodeURIComponent);
    return FILE_NAME.test(fileName) ? { instanceId, roomId, fileName } : null;
  } catch {
    return null;
  }
}
