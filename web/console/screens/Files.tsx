import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { paths, useSession } from '../api/session';
import { ActionResult, useAction } from '../components/async';
import { NeedsCredential } from '../components/layout';

/**
 * Files of a room: an attachment's download link (v6 attachments) or a v2 file's record, and
 * deleting a file or every file of a user. Files are found by the message parts that name them
 * (Rooms → messages → Show content).
 */
export function Files() {
  const session = useSession();
  const instanceId = session.instance?.instanceId ?? '';
  const [params] = useSearchParams();
  const [roomId, setRoomId] = useState(params.get('room') ?? '');
  const [name, setName] = useState('');
  const [userId, setUserId] = useState('');
  const [found, setFound] = useState<unknown>();
  const look = useAction();
  const remove = useAction();
  if (!session.instance) return <NeedsCredential what="an instance key" />;
  const room = () => encodeURIComponent(roomId.trim());
  const file = () => encodeURIComponent(name.trim());
  const find = (event: FormEvent) => {
    event.preventDefault();
    setFound(undefined);
    void look.run(async () => {
      // An attachment id (v6) first, then a file name (v2 files API).
      try {
        setFound(await session.instanceCall('GET', paths.chat(instanceId, `/rooms/${room()}/attachments/${file()}`)));
      } catch {
        setFound(await session.instanceCall('GET', paths.files(instanceId, `/rooms/${room()}/files/${file()}`)));
      }
    });
  };
  const deleteFile = () =>
    window.confirm(`Delete ${name} of room ${roomId}?`) &&
    void remove.run(async () => (await session.instanceCall('DELETE', paths.files(instanceId, `/rooms/${room()}/files/${file()}`)), `Deleted ${name}`));
  const deleteUserFiles = () =>
    window.confirm(`Delete every file ${userId} uploaded?`) &&
    void remove.run(async () => (await session.instanceCall('DELETE', paths.files(instanceId, `/users/${encodeURIComponent(userId.trim())}`)), `Deleted the files of ${userId}`));
  const link = (found as { download_url?: string; resource_link?: string } | undefined)?.download_url ?? (found as { resource_link?: string } | undefined)?.resource_link;
  return (
    <section>
      <h1>Files</h1>
      <form className="inline" onSubmit={find} aria-label="find file">
        <input placeholder="Room id" value={roomId} onChange={(e) => setRoomId(e.target.value)} required aria-label="room id" />
        <input placeholder="Attachment id or file name" value={name} onChange={(e) => setName(e.target.value)} required aria-label="file" />
        <button type="submit">Find</button>
        <button type="button" className="danger" onClick={deleteFile} disabled={!roomId || !name}>
          Delete file
        </button>
      </form>
      <ActionResult action={look} />
      {found !== undefined && (
        <div className="found">
          <pre>{JSON.stringify(found, null, 2)}</pre>
          {link && (
            <a href={link} rel="noreferrer" target="_blank">
              Download
            </a>
          )}
        </div>
      )}
      <form className="inline" onSubmit={(e) => (e.preventDefault(), deleteUserFiles())} aria-label="delete user files">
        <h2>Every file of a user</h2>
        <input placeholder="User id" value={userId} onChange={(e) => setUserId(e.target.value)} required aria-label="user id" />
        <button type="submit" className="danger">
          Delete their files
        </button>
      </form>
      <ActionResult action={remove} />
    </section>
  );
}
