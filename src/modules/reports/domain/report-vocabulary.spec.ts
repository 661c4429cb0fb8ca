import type { ReportCategory as ClientReportCategory, ReportResolutionAction as ClientResolutionAction } from '../../../client/chat-server';
import { REPORT_CATEGORIES, ReportCategory, RESOLUTION_ACTIONS, ResolutionAction } from './report-vocabulary';

/*
 * Parley's chat-server client library (src/client) runs in apps and imports nothing of the
 * server, so it spells the vocabulary out in its own types. These compile only while the two
 * name the same words both ways (`npm run typecheck` compiles the specs): a category or action
 * added on one side alone fails the build.
 */
const categoriesForTheClient: readonly ClientReportCategory[] = REPORT_CATEGORIES;
const categoryFromTheClient = (category: ClientReportCategory): ReportCategory => category;
const actionsForTheClient: readonly ClientResolutionAction[] = RESOLUTION_ACTIONS;
const actionFromTheClient = (action: ClientResolutionAction): ResolutionAction => action;

describe('the reports vocabulary', () => {
  it('is the one the chat-server client library types its report calls with', () => {
    expect(categoriesForTheClient.map(categoryFromTheClient)).toEqual([...REPORT_CATEGORIES]);
    expect(actionsForTheClient.map(actionFromTheClient)).toEqual([...RESOLUTION_ACTIONS]);
  });
});
