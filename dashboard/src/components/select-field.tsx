import { useId } from "preact/hooks";

/**
 * A labelled <select> over a list of values; `optionLabel` names each one (the "" of a filter
 * becomes "All", a creator's id its name).
 */
export function SelectField<T extends string>(props: {
  label: string;
  value: T;
  values: readonly T[];
  optionLabel?(value: NoInfer<T>): string;
  onChange(value: NoInfer<T>): void;
  required?: boolean;
  describedBy?: string;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        required={props.required}
        aria-describedby={props.describedBy}
        onChange={(event) => props.onChange(event.currentTarget.value as T)}
      >
        {props.values.map((value) => (
          <option value={value} key={value}>
            {props.optionLabel ? props.optionLabel(value) : value}
          </option>
        ))}
      </select>
    </div>
  );
}
