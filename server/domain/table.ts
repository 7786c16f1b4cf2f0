/**
 * How a table is declared (domain/tables.ts): one field per column, named in camelCase (the
 * column is its snake_case), each with how its value is read from a row. A domain record's type
 * comes from its declaration (`RecordOf`), and the store's statements (store/statements.ts) list
 * the columns, number the parameters and read rows from it, so a column is named once.
 */

/** What a declared field is, beside its value's type. */
interface Flags {
  /** Not a column of the table: read back from what a statement computes (a join), never written. */
  readonly computed: boolean;
  /** Written but never read back into the record (a secret's hash, a long script). */
  readonly writeOnly: boolean;
  /** The database has a default: an insert may leave it out. */
  readonly defaulted: boolean;
}

export class Column<T, Flag extends Partial<Flags> = Record<never, never>> {
  /** Not a value: carries the field's type and flags for the type helpers below. */
  declare readonly type: T;
  declare readonly flag: Flag;
  readonly read: (value: unknown) => T;
  /** The type's empty value (null where nullable): what `emptyRecord` fills a field with. */
  readonly empty: T;
  /** The column's SQL type, for a statement that casts its parameters (an `unnest` of arrays). */
  readonly sqlType: string;
  readonly flags: Flags;

  constructor(
    read: (value: unknown) => T,
    empty: T,
    sqlType: string,
    flags: Flags = { computed: false, writeOnly: false, defaulted: false },
  ) {
    this.read = read;
    this.empty = empty;
    this.sqlType = sqlType;
    this.flags = flags;
  }

  /** NULL as null. */
  nullable(): Column<T | null, Flag> {
    const read = this.read;
    return new Column(
      (value) => (value === null || value === undefined ? null : read(value)),
      null,
      this.sqlType,
      this.flags,
    );
  }

  /** See Flags.computed. */
  computed(): Column<T, Flag & { computed: true }> {
    return new Column(this.read, this.empty, this.sqlType, { ...this.flags, computed: true });
  }

  /** See Flags.writeOnly. */
  writeOnly(): Column<T, Flag & { writeOnly: true }> {
    return new Column(this.read, this.empty, this.sqlType, { ...this.flags, writeOnly: true });
  }

  /** See Flags.defaulted. */
  defaulted(): Column<T, Flag & { defaulted: true }> {
    return new Column(this.read, this.empty, this.sqlType, { ...this.flags, defaulted: true });
  }
}

const same = <T>(value: unknown) => value as T;

/** text, or a text column holding one of a set of values (`text<Mode>()`). */
export const text = <T extends string = string>(): Column<T> => new Column(same<T>, "" as T, "text");
/** uuid: its text. */
export const uuid = (): Column<string> => new Column(same<string>, "", "uuid");
/** integer: a number from both drivers. */
export const int = <T extends number = number>(): Column<T> => new Column(same<T>, 0 as T, "int");
/** real: a number from both drivers. */
export const real = (): Column<number> => new Column(Number, 0, "real");
/** bigint: text from both drivers, a number in the record (cents and counts stay far below 2^53). */
export const bigint = (): Column<number> => new Column(Number, 0, "bigint");
export const bool = (): Column<boolean> => new Column(same<boolean>, false, "boolean");
/** timestamptz: a Date of its own (a timestamp inside `to_jsonb(…)` comes as ISO text). */
export const time = (): Column<Date> =>
  new Column((value) => new Date(value as Date | string), new Date(0), "timestamptz");
/** An array column (text[]). */
export const list = <T>(): Column<T[]> => new Column(same<T[]>, [], "text[]");

/** A table: its name and its fields, in column order. */
export interface Table<Fields extends Record<string, Column<unknown, Partial<Flags>>>> {
  readonly name: string;
  readonly fields: Fields;
  /** Each field's column (snake_case), in declaration order. */
  readonly columns: Readonly<Record<keyof Fields & string, string>>;
}

export function table<const Fields extends Record<string, Column<unknown, Partial<Flags>>>>(
  name: string,
  fields: Fields,
): Table<Fields> {
  const columns = Object.fromEntries(
    Object.keys(fields).map((field) => [field, field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
  ) as Record<keyof Fields & string, string>;
  return { name, fields, columns };
}

type AnyTable = Table<Record<string, Column<unknown, Partial<Flags>>>>;
type FieldsOf<T extends AnyTable> = T["fields"];
type TypeOf<C> = C extends Column<infer V, Partial<Flags>> ? V : never;
type Flagged<T extends AnyTable, Flag extends keyof Flags> = {
  [K in keyof FieldsOf<T>]: FieldsOf<T>[K]["flag"] extends Record<Flag, true> ? K : never;
}[keyof FieldsOf<T>];

/** The domain record of a table: every field but the write-only ones. */
export type RecordOf<T extends AnyTable> = {
  -readonly [K in Exclude<keyof FieldsOf<T>, Flagged<T, "writeOnly">>]: TypeOf<FieldsOf<T>[K]>;
};

/** What an insert takes: every field but the computed ones, those with a default optional. */
export type InsertOf<T extends AnyTable> = {
  [K in Exclude<keyof FieldsOf<T>, Flagged<T, "computed"> | Flagged<T, "defaulted">>]: TypeOf<FieldsOf<T>[K]>;
} & {
  [K in Exclude<Flagged<T, "defaulted">, Flagged<T, "computed">>]?: TypeOf<FieldsOf<T>[K]>;
};

/** The fields of a table that can be written: every one but the computed. */
export type WritableOf<T extends AnyTable> = Exclude<keyof FieldsOf<T>, Flagged<T, "computed">> & string;

/**
 * A record of the table with every field at its type's empty value (null where nullable): the base
 * of a record a unit test makes, which then names only the fields it is about, so a new column
 * needs no test changed.
 */
export function emptyRecord<T extends AnyTable>(table: T): RecordOf<T> {
  const record: Record<string, unknown> = {};
  for (const [field, column] of Object.entries(table.fields))
    if (!column.flags.writeOnly)
      record[field] = column.empty instanceof Date ? new Date(0) : Array.isArray(column.empty) ? [] : column.empty;
  return record as RecordOf<T>;
}
