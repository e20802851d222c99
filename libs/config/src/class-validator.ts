import type * as ClassValidator from 'class-validator';

/*
 * What the config models use of class-validator, each from its own CommonJS file of the
 * package. The package's index loads every decorator it has, and with them validator.js and
 * libphonenumber-js: about 290 modules and 100 ms of CPU in every start, for validators the
 * config never uses (docs/benchmarks.md, "Start-up: what every gateway loads"). The decorators
 * and the validator below share the package's one metadata storage (a global), so a model
 * decorated here is validated here exactly as through the index. Types come from the package.
 */
type Cv = typeof ClassValidator;

/* eslint-disable @typescript-eslint/no-require-imports -- each file named literally, so the
   build keeps it an external require (a template would make webpack bundle the folder) */
export const { IsOptional } = require('class-validator/cjs/decorator/common/IsOptional') as Pick<
  Cv,
  'IsOptional'
>;
export const { IsIn } = require('class-validator/cjs/decorator/common/IsIn') as Pick<Cv, 'IsIn'>;
export const { IsDefined } = require('class-validator/cjs/decorator/common/IsDefined') as Pick<
  Cv,
  'IsDefined'
>;
export const { ValidateNested } =
  require('class-validator/cjs/decorator/common/ValidateNested') as Pick<Cv, 'ValidateNested'>;
export const { IsString } = require('class-validator/cjs/decorator/typechecker/IsString') as Pick<
  Cv,
  'IsString'
>;
export const { IsArray } = require('class-validator/cjs/decorator/typechecker/IsArray') as Pick<
  Cv,
  'IsArray'
>;
export const { IsInt } = require('class-validator/cjs/decorator/typechecker/IsInt') as Pick<
  Cv,
  'IsInt'
>;
export const { IsBoolean } = require('class-validator/cjs/decorator/typechecker/IsBoolean') as Pick<
  Cv,
  'IsBoolean'
>;
export const { IsObject } = require('class-validator/cjs/decorator/typechecker/IsObject') as Pick<
  Cv,
  'IsObject'
>;
export const { IsNumber } = require('class-validator/cjs/decorator/typechecker/IsNumber') as Pick<
  Cv,
  'IsNumber'
>;
export const { Matches } = require('class-validator/cjs/decorator/string/Matches') as Pick<
  Cv,
  'Matches'
>;
export const { MinLength } = require('class-validator/cjs/decorator/string/MinLength') as Pick<
  Cv,
  'MinLength'
>;
export const { MaxLength } = require('class-validator/cjs/decorator/string/MaxLength') as Pick<
  Cv,
  'MaxLength'
>;
export const { Min } = require('class-validator/cjs/decorator/number/Min') as Pick<Cv, 'Min'>;
export const { Max } = require('class-validator/cjs/decorator/number/Max') as Pick<Cv, 'Max'>;
export const { ArrayNotEmpty } =
  require('class-validator/cjs/decorator/array/ArrayNotEmpty') as Pick<Cv, 'ArrayNotEmpty'>;
const { getFromContainer } = require('class-validator/cjs/container') as Pick<
  Cv,
  'getFromContainer'
>;
const { Validator } = require('class-validator/cjs/validation/Validator') as Pick<Cv, 'Validator'>;
/* eslint-enable @typescript-eslint/no-require-imports */

export type { ValidationError } from 'class-validator';

/** class-validator's own `validateSync(object, options)`, as its index defines it. */
export function validateSync(
  object: object,
  options?: ClassValidator.ValidatorOptions,
): ClassValidator.ValidationError[] {
  return getFromContainer(Validator).validateSync(object, options);
}
