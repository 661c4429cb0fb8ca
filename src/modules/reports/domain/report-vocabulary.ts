/**
 * The words of the reports API: what a report may say it is about, and what a moderator may do
 * about one. The server validates with them and the console (web/console) offers them, from this
 * one list. It imports nothing, so the console's bundle takes these lists and none of the server.
 */

/**
 * Report categories (the shapes Stream, Discord and the EU's DSA notices share): what a
 * moderator sorts the queue by. `other` asks for a reason in words.
 */
export const REPORT_CATEGORIES = ['spam', 'harassment', 'hate', 'violence', 'sexual', 'self_harm', 'illegal', 'impersonation', 'other'] as const;
export type ReportCategory = (typeof REPORT_CATEGORIES)[number];

/** What a moderator did about a report: `delete_message` also deletes the reported message. */
export const RESOLUTION_ACTIONS = ['dismiss', 'delete_message', 'other'] as const;
export type ResolutionAction = (typeof RESOLUTION_ACTIONS)[number];
