import { badRequest, notFound } from '../../../shared/domain/errors';

/** The files API (chatkit_files v1), used by chatkit-client for v2 "data attachments". */
export const FILES_ROUTE = 'services/chatkit_files/v1/:instanceId';

/**
 * The seed writes file names with only A-Z, a-z, 0-9, `.`, `_` and `-`, but chatkit-client sends
 * the name of the file a user picked (its own suite uploads "file: with spaces.json") and reads
 * it back: any text of 1 to 255 characters but a path (no `/` or `\`, not `.` or `..`) and
 * control characters. Names never reach the file system: blobs are stored under random keys.
 */
const FILE_NAME = /^[^/\\\u0000-\u001f\u007f]{1,255}$/u;

export function assertFileName(fileName: string): void {
  if (!FILE_NAME.test(fileName) || fileName === '.' || fileName === '..') {
    throw badRequest('invalid_file_name', 'File names are 1 to 255 characters, without "/", "\\" or control characters, and not "." or ".."');
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
