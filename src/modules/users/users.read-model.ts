import { Inject, Injectable } from '@nestjs/common';
import { READ_MODEL_STORE, ReadModelStore } from '../../shared/ports/read-model-store.port';
import { USERS, UserDocument, userDocumentId } from '../../../projections/users/users.projection';
import { userNotFound } from './domain/user.decider';

/** Reads of the users read model shared by the users use cases and other contexts. */
@Injectable()
export class UsersReadModel {
  constructor(@Inject(READ_MODEL_STORE) private readonly readModels: ReadModelStore) {}

  find(instanceId: string, userId: string): Promise<UserDocument | null> {
    return this.readModels.get<UserDocument>(USERS, userDocumentId(instanceId, userId));
  }

  async get(instanceId: string, userId: string): Promise<UserDocument> {
    const user = await this.find(instanceId, userId);
    if (!user) throw userNotFound(userId);
    return user;
  }

  /** The users that exist among `userIds`, in no particular order. */
  findMany(instanceId: string, userIds: readonly string[]): Promise<UserDocument[]> {
    return this.readModels.getMany<UserDocument>(
      USERS,
      userIds.map((id) => userDocumentId(instanceId, id)),
    );
  }
}
