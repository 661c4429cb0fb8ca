import type { ApiPropertyOptions } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { getMetadataStorage } from '../../shared/http/class-validator-parts';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata';
import { swaggerLibrary } from './swagger-library';
// The storage @Type writes to: where a nested array names its element class.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { defaultMetadataStorage: transformerTypes } = require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage');

type Class = abstract new (...args: never[]) => unknown;

const described = new WeakSet<Function>();

/**
 * Lets @nestjs/swagger see the request DTOs' properties as their class-validator decorators
 * define them (the job the Nest CLI plugin does at build time, which a plain tsc build has not):
 * each validated property gets an `@ApiProperty` with its type, whether it is required and its
 * limits. Run before the document is scanned; a class is described once per process.
 */
export function describeValidatedClasses(): void {
  const { ApiProperty } = swaggerLibrary();
  const storage = getMetadataStorage();
  // class-validator keeps its metadata by class; it has no public way to list the classes.
  const byClass = (storage as unknown as { validationMetadatas?: Map<Function, unknown> }).validationMetadatas;
  for (const target of byClass?.keys() ?? []) {
    if (typeof target !== 'function' || described.has(target)) continue;
    described.add(target);
    const properties = storage.groupByPropertyName(storage.getTargetValidationMetadatas(target, '', true, false));
    for (const [property, rules] of Object.entries(properties)) {
      ApiProperty(propertyOptions(target, property, rules))(target.prototype as object, property);
    }
  }
}

function propertyOptions(target: Function, property: string, rules: ValidationMetadata[]): ApiPropertyOptions {
  const required = !rules.some((rule) => rule.name === 'isOptional');
  const isArray = rules.some((rule) => rule.name === 'isArray' || rule.each);
  const arrayLimits = limits(rules.filter((rule) => !rule.each));
  const nested = rules.some((rule) => rule.type === 'nestedValidation');
  if (nested) {
    const declared = Reflect.getMetadata('design:type', target.prototype as object, property) as Class | undefined;
    const element = (transformerTypes.findTypeMetadata(target, property)?.typeFunction() as Class | undefined) ?? declared;
    return { required, type: () => element, isArray, ...(isArray && arrayLimits) } as ApiPropertyOptions;
  }
  if (isArray) {
    return { required, type: 'array', items: scalar(rules.filter((rule) => rule.each)), ...arrayLimits } as ApiPropertyOptions;
  }
  return { required, ...scalar(rules) } as ApiPropertyOptions;
}

/** The array limits among the rules. */
function limits(rules: ValidationMetadata[]): SchemaObject {
  const schema: SchemaObject = {};
  for (const rule of rules) {
    if (rule.name === 'arrayMinSize') schema.minItems = rule.constraints[0] as number;
    if (rule.name === 'arrayMaxSize') schema.maxItems = rule.constraints[0] as number;
  }
  return schema;
}

/** A scalar's schema from its rules (the JSON type, enum, length, pattern and range). */
function scalar(rules: ValidationMetadata[]): SchemaObject {
  const schema: SchemaObject = {};
  const types: Record<string, SchemaObject['type']> = { isString: 'string', isInt: 'integer', isNumber: 'number', isBoolean: 'boolean', isObject: 'object' };
  for (const rule of rules) {
    const [first] = rule.constraints ?? [];
    const name = rule.name ?? '';
    if (types[name]) schema.type = types[name];
    else if (name === 'isIn') schema.enum = first as unknown[];
    else if (name === 'maxLength' || name === 'maxCharacters') schema.maxLength = first as number;
    else if (name === 'minLength') schema.minLength = first as number;
    else if (name === 'matches') schema.pattern = first instanceof RegExp ? first.source : String(first);
    else if (name === 'min') schema.minimum = first as number;
    else if (name === 'max') schema.maximum = first as number;
  }
  if (rules.some((rule) => rule.name === 'isNotEmpty') && schema.type === 'string') schema.minLength ??= 1;
  return schema;
}
