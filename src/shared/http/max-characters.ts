import type { ValidationOptions } from 'class-validator';
import { buildMessage, ValidateBy } from './class-validator-parts';

/** How many characters (Unicode code points, as JSON Schema's maxLength counts) a string holds. */
export const characterCount = (value: string): number => {
  let count = 0;
  for (const _ of value) count++;
  return count;
};

/**
 * A string of at most `max` characters, counted as code points: an emoji is one character, not
 * the two UTF-16 units class-validator's @MaxLength counts. The OpenAPI document shows it as
 * `maxLength`, which counts the same way.
 */
export const MaxCharacters = (max: number, options?: ValidationOptions): PropertyDecorator =>
  ValidateBy(
    {
      name: 'maxCharacters',
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && characterCount(value) <= max,
        defaultMessage: buildMessage((each) => `${each}$property must be at most $constraint1 characters`, options),
      },
    },
    options,
  );
