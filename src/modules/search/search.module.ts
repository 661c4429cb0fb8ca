import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { MessageSearch } from './message-search';
import { SearchMessagesController, SearchMessagesHandler } from './search-messages/search-messages';

/** Message search over the search index (projections/search/message-search.projection.ts). */
@Module({
  imports: [MessagesModule],
  controllers: [SearchMessagesController],
  providers: [MessageSearch, SearchMessagesHandler],
})
export class SearchModule {}
