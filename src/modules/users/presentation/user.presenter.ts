import { UserDocument } from '../../../../projections/users/users.projection';

export interface UserResponse {
  id: string;
  name: string;
  avatar_url?: string;
  custom_data?: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/** The user as both chat API versions return it. */
export const presentUser = (doc: UserDocument): UserResponse => ({
  id: doc.id,
  name: doc.name,
  ...(doc.avatar_url !== undefined && { avatar_url: doc.avatar_url }),
  ...(doc.custom_data !== undefined && { custom_data: doc.custom_data }),
  created_at: doc.created_at,
  updated_at: doc.updated_at,
});
