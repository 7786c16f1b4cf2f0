/** A fieldset of checkboxes, one per value, for picking several of a fixed list (scopes, events). */
export function CheckboxGroup<T extends string>(props: {
  legend: string;
  values: readonly T[];
  checked: readonly T[];
  onChange(checked: T[]): void;
}) {
  const turn = (value: T, on: boolean) =>
    props.onChange(on ? [...props.checked, value] : props.checked.filter((one) => one !== value));
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.values.map((value) => (
        <label class="check" key={value}>
          <input
            type="checkbox"
            checked={props.checked.includes(value)}
            onChange={(event) => turn(value, event.currentTarget.checked)}
          />
          {value}
        </label>
      ))}
    </fieldset>
  );
}
