import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import type { MetadataStorage as TransformerMetadataStorage } from 'class-transformer/types/MetadataStorage';
import type { ValidationArguments } from 'class-validator';
import { getMetadataStorage, validate, ValidationTypes } from './class-validator-parts';
import { badRequest, DomainError, unprocessable } from '../domain/errors';
import { DEFAULT_CUSTOM_DATA_MAX_BYTES } from './body-parser';


/** The bytes `custom_data` takes as JSON, as it is stored in the log. */
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '');

/**
 * 413 when a `custom_data` of a validated body, at any depth of its DTOs (each user of a
 * batch), holds more than `maxBytes` of JSON. Only DTO fields are looked at, never the insides
 * of callers' own data.
 */
function requireCustomDataWithin(value: unknown, maxBytes: number): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) requireCustomDataWithin(item, maxBytes);
    return;
  }
  // A plain object is the caller's data (custom_data itself, a message part): not a DTO.
  if (Object.getPrototypeOf(value) === Object.prototype) return;
  for (const [name, field] of Object.entries(value)) {
    if (name === 'custom_data' && field !== undefined && field !== null) {
      const bytes = jsonBytes(field);
      if (bytes > maxBytes) {
        throw new DomainError('payload_too_large', 'custom_data_too_large', `custom_data is ${bytes} bytes of JSON; at most ${maxBytes} are accepted`);
      }
    } else {
      requireCustomDataWithin(field, maxBytes);
    }
  }
}

/** class-transformer's decorator records (@Type, @Transform, @Expose, @Exclude); its index does not export them. */
const transformerMetadata = (require('class-transformer/cjs/storage') as { defaultMetadataStorage: TransformerMetadataStorage }).defaultMetadataStorage;

/**
 * class-validator for Nest's pipe, from its parts rather than its index, which the pipe would load
 * (class-validator-parts.ts says why); with its metadata storage, which the pipe reads too (a
 * nested object's binary values), though its type does not say so.
 */
const CLASS_VALIDATOR = { validate, getMetadataStorage };

const flatten = (errors: ValidationError[]): string[] =>
  errors.flatMap((e) => [...Object.values(e.constraints ?? {}), ...flatten(e.children ?? [])]);

/**
 * class-validator DTOs; a body that does not fit answers 422 with every reason found.
 * A missing body counts as `{}`: SDKs send body-less POSTs, and the DTO says what is required;
 * any other body that is not a JSON object is 400 invalid_body.
 *
 * A body that passes every rule takes a shortcut (`acceptedBody`): the same rules, read once
 * per DTO from class-validator's metadata, checked without class-transformer and without
 * class-validator's per-call lookups (about a tenth of a write's CPU). Anything the shortcut
 * does not accept goes the whole way, so every error is class-validator's own.
 */
@Injectable()
export class RequestValidationPipe extends ValidationPipe {
  /** `customDataMaxBytes`: CUSTOM_DATA_MAX_BYTES, the most any `custom_data` field of a body may hold as JSON. */
  constructor(private readonly customDataMaxBytes = DEFAULT_CUSTOM_DATA_MAX_BYTES) {
    super({
      whitelist: true,
      transform: true,
      validatorPackage: CLASS_VALIDATOR,
      exceptionFactory: (errors) => unprocessable('validation_failed', flatten(errors).join('; ')),
    });
  }

  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Only bodies are DTOs. Path and query values stay strings: a param typed as a union of
    // numbers would otherwise be "converted" from its design type (v6 → NaN) before its own pipe.
    if (metadata.type !== 'body') return Promise.resolve(value);
    if (value === undefined) value = {};
    // A JSON null, array or scalar is not a missing body: it is the wrong kind of body.
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw badRequest('invalid_body', 'The request body must be a JSON object');
    }
    const accepted = metadata.metatype ? acceptedBody(metadata.metatype, value) : undefined;
    const validated = accepted ? Promise.resolve(accepted) : super.transform(value, metadata);
    return validated.then((dto: unknown) => {
      requireCustomDataWithin(dto, this.customDataMaxBytes);
      return dto;
    });
  }
}

/**
 * Validates a body against a DTO chosen at run time (e.g. by API version), with the same
 * rules and errors as the global pipe.
 */
export async function validateBody<T extends object>(dto: new () => T, body: unknown): Promise<T> {
  return (await sharedPipe.transform(body, { type: 'body', metatype: dto })) as T;
}

/** The pipe keeps no per-call state; building one per call cost about 0.1 ms a send (module resolution). */
const sharedPipe = new RequestValidationPipe();

/** One property's rules, as class-validator applies them. */
interface PropertyRules {
  readonly name: string;
  /** @IsOptional and the like: when one says no, the property's other rules are skipped. */
  readonly conditions: ((object: object, value: unknown) => boolean)[];
  readonly checks: { validate: (value: unknown, args: ValidationArguments) => unknown; constraints: unknown[] }[];
  /** @ValidateNested with @Type: the value (or each item of an array) is a DTO of this class. */
  readonly nested?: DtoRules;
}

interface DtoRules {
  readonly dto: new () => object;
  readonly properties: PropertyRules[];
}

/** Rules by DTO; null: the DTO uses something the shortcut does not reproduce, it always goes the whole way. */
const rulesByDto = new Map<Function, DtoRules | null>();

/**
 * The DTO instance class-transformer and class-validator (whitelist) would make of `body`
 * when it passes every rule; undefined when it fails one or the shortcut cannot tell.
 */
function acceptedBody(dto: Function, body: object): object | undefined {
  let rules = rulesByDto.get(dto);
  if (rules === undefined) {
    rules = rulesOf(dto, new Set());
    rulesByDto.set(dto, rules);
  }
  return rules ? accepted(rules, body) : undefined;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;

function accepted(rules: DtoRules, body: unknown): object | undefined {
  if (!isPlainObject(body)) return undefined;
  const instance = new rules.dto() as Record<string, unknown>;
  for (const property of rules.properties) {
    const value = Object.prototype.hasOwnProperty.call(body, property.name) ? body[property.name] : undefined;
    if (property.conditions.every((applies) => applies(body, value))) {
      const args: ValidationArguments = { targetName: rules.dto.name, property: property.name, object: body, value, constraints: [] };
      for (const check of property.checks) {
        args.constraints = check.constraints;
        const valid = check.validate(value, args);
        if (valid !== true) return undefined; // a failure, or an asynchronous rule: the whole way says which
      }
      if (property.nested && value !== undefined) {
        const built = Array.isArray(value) ? value.map((item) => accepted(property.nested!, item)) : [accepted(property.nested, value)];
        if (built.some((item) => item === undefined)) return undefined;
        instance[property.name] = Array.isArray(value) ? built : built[0];
        continue;
      }
    }
    // Values without a nested DTO are kept as they came (class-transformer would copy them).
    if (value !== undefined || Object.prototype.hasOwnProperty.call(body, property.name)) {
      if (isPlainObject(value) || Array.isArray(value)) {
        if (!withoutProtoKeys(value)) return undefined;
      }
      instance[property.name] = value;
    }
  }
  return instance;
}

/** Whether a value holds none of the keys the pipe strips (`__proto__`, `constructor`, `prototype`) at any depth. */
function withoutProtoKeys(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(withoutProtoKeys);
  if (typeof value !== 'object' || value === null) return true;
  if (!isPlainObject(value)) return false;
  for (const key of Object.keys(value)) {
    if (key === '__proto__' || key === 'constructor' || key === 'prototype') return false;
    if (!withoutProtoKeys(value[key])) return false;
  }
  return true;
}

/** A DTO's rules as the shortcut applies them, or null when it uses anything else (the whole way then). */
function rulesOf(dto: Function, seen: Set<Function>): DtoRules | null {
  if (seen.has(dto)) return null; // recursive DTOs: not worth a shortcut
  seen.add(dto);
  const storage = getMetadataStorage();
  const metadatas = storage.getTargetValidationMetadatas(dto, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  // class-transformer rules other than @Type change values or names: the whole way.
  if (transformerMetadata.getExposedMetadatas(dto).length || transformerMetadata.getExcludedMetadatas(dto).length) return null;
  const properties: PropertyRules[] = [];
  for (const [name, list] of Object.entries(storage.groupByPropertyName(metadatas))) {
    const rules: PropertyRules = { name, conditions: [], checks: [] };
    if (transformerMetadata.findTransformMetadatas(dto, name, 1 /* PLAIN_TO_CLASS */).length) return null;
    if (transformerMetadata.findTransformMetadatas(dto, name, 2 /* CLASS_TO_CLASS */).length) return null;
    const type = transformerMetadata.findTypeMetadata(dto, name);
    for (const metadata of list) {
      if (metadata.each && metadata.type !== ValidationTypes.NESTED_VALIDATION) return null;
      if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) {
        rules.conditions.push(metadata.constraints[0] as PropertyRules['conditions'][number]);
      } else if (metadata.type === ValidationTypes.CUSTOM_VALIDATION) {
        for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
          if (constraint.async) return null;
          const instance = constraint.instance as { validate: PropertyRules['checks'][number]['validate'] };
          rules.checks.push({ validate: instance.validate.bind(instance), constraints: metadata.constraints });
        }
      } else if (metadata.type === ValidationTypes.NESTED_VALIDATION) {
        if (!type || type.options?.discriminator || rules.nested) return null;
        const nested = rulesOf(type.typeFunction() as Function, seen);
        if (!nested) return null;
        (rules as { nested?: DtoRules }).nested = nested;
      } else {
        return null; // @IsDefined, promise validation, whitelist markers: the whole way
      }
    }
    // A @Type without @ValidateNested still builds an instance: the whole way.
    if (type && !rules.nested) return null;
    properties.push(rules);
  }
  seen.delete(dto);
  return { dto: dto as new () => object, properties };
}
