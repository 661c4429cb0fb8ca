/** The commands other modules may send to messages through the command bus (a moderator's resolution deletes the reported message). */
export { DeleteMessageCommand } from './delete-message/delete-message';
