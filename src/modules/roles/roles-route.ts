import { badRequest, unprocessable } from '../../shared/domain/errors';
import { isRoleScope, RoleScope, ROLE_SCOPES } from './domain/permissions';

/** The roles and permissions API (chatkit_authorizer v2): su only. */
export const AUTHORIZER_ROUTE = 'services/chatkit_authorizer/v2/:instanceId';

const MAX_NAME_LENGTH = 100;

export const requireName = (value: unknown, field: string): string => {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME_LENGTH) {
    throw badRequest('invalid_parameters', `"${field}" must be a string of 1 to ${MAX_NAME_LENGTH} characters`);
  }
  return value;
};

export const requireScope = (value: unknown): RoleScope => {
  if (value === undefined) throw badRequest('invalid_parameters', `"scope" is required (${ROLE_SCOPES.join(' or ')})`);
  if (!isRoleScope(value)) {
    throw unprocessable('invalid_scope', `Unknown scope ${JSON.stringify(value)}; allowed: ${ROLE_SCOPES.join(', ')}`);
  }
  return value;
};

/** An array of strings (names are checked against the known permissions by the decider). */
export const requireStringArray = (value: unknown, field: string): string[] => {
  if (!Array.isArray(value) || value.some((p) => typeof p !== 'string')) {
    throw badRequest('invalid_parameters', `"${field}" must be an array of permission names`);
  }
  return value as string[];
};

