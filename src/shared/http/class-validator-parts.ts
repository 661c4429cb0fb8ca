/* eslint-disable @typescript-eslint/no-require-imports */
import type * as ClassValidator from 'class-validator';

/*
 * The parts of class-validator Parley uses, each loaded from its own file: the package's index
 * loads every validator it has (about 300 modules and 3 MB of heap, libphonenumber-js's metadata
 * and all of validator.js) for the twenty used here. Import them from here, not from
 * 'class-validator' (`npm run lint:deps` says so); types may still come from the package.
 */
type Api = typeof ClassValidator;

export const { Allow } = require('class-validator/cjs/decorator/common/Allow') as Pick<Api, 'Allow'>;
export const { IsIn } = require('class-validator/cjs/decorator/common/IsIn') as Pick<Api, 'IsIn'>;
export const { IsNotEmpty } = require('class-validator/cjs/decorator/common/IsNotEmpty') as Pick<Api, 'IsNotEmpty'>;
export const { IsOptional } = require('class-validator/cjs/decorator/common/IsOptional') as Pick<Api, 'IsOptional'>;
export const { ValidateBy, buildMessage } = require('class-validator/cjs/decorator/common/ValidateBy') as Pick<Api, 'ValidateBy' | 'buildMessage'>;
export const { ValidateIf } = require('class-validator/cjs/decorator/common/ValidateIf') as Pick<Api, 'ValidateIf'>;
export const { ValidateNested } = require('class-validator/cjs/decorator/common/ValidateNested') as Pick<Api, 'ValidateNested'>;
export const { IsArray } = require('class-validator/cjs/decorator/typechecker/IsArray') as Pick<Api, 'IsArray'>;
export const { IsBoolean } = require('class-validator/cjs/decorator/typechecker/IsBoolean') as Pick<Api, 'IsBoolean'>;
export const { IsInt } = require('class-validator/cjs/decorator/typechecker/IsInt') as Pick<Api, 'IsInt'>;
export const { IsObject } = require('class-validator/cjs/decorator/typechecker/IsObject') as Pick<Api, 'IsObject'>;
export const { IsString } = require('class-validator/cjs/decorator/typechecker/IsString') as Pick<Api, 'IsString'>;
export const { Matches } = require('class-validator/cjs/decorator/string/Matches') as Pick<Api, 'Matches'>;
export const { MaxLength } = require('class-validator/cjs/decorator/string/MaxLength') as Pick<Api, 'MaxLength'>;
export const { Max } = require('class-validator/cjs/decorator/number/Max') as Pick<Api, 'Max'>;
export const { Min } = require('class-validator/cjs/decorator/number/Min') as Pick<Api, 'Min'>;
export const { ArrayMaxSize } = require('class-validator/cjs/decorator/array/ArrayMaxSize') as Pick<Api, 'ArrayMaxSize'>;
export const { ArrayMinSize } = require('class-validator/cjs/decorator/array/ArrayMinSize') as Pick<Api, 'ArrayMinSize'>;
export const { ArrayUnique } = require('class-validator/cjs/decorator/array/ArrayUnique') as Pick<Api, 'ArrayUnique'>;
export const { getMetadataStorage } = require('class-validator/cjs/metadata/MetadataStorage') as Pick<Api, 'getMetadataStorage'>;
export const { ValidationTypes } = require('class-validator/cjs/validation/ValidationTypes') as Pick<Api, 'ValidationTypes'>;
const { Validator } = require('class-validator/cjs/validation/Validator') as Pick<Api, 'Validator'>;
const { getFromContainer } = require('class-validator/cjs/container') as Pick<Api, 'getFromContainer'>;

/** class-validator's `validate(object, options)`, as its index defines it (the one Validator of the container). */
export const validate = (object: object, options?: ClassValidator.ValidatorOptions): Promise<ClassValidator.ValidationError[]> =>
  getFromContainer(Validator).validate(object, options);
