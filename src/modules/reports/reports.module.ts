import { Module } from '@nestjs/common';
import { MessagesModule } from '../messages/messages.module';
import { RoomsModule } from '../rooms/rooms.module';
import { FileReportController, FileReportHandler } from './file-report/file-report';
import { ResolveReportHandler } from './review-reports/resolve-report';
import { ReviewReportsController } from './review-reports/review-reports';
import { ReportsReadModel } from './reports.read-model';

/** Reports of messages and users (v6), and the review queue moderators read and resolve (parley_admin). */
@Module({
  imports: [MessagesModule, RoomsModule],
  controllers: [FileReportController, ReviewReportsController],
  providers: [FileReportHandler, ResolveReportHandler, ReportsReadModel],
})
export class ReportsModule {}
