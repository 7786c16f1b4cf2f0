import { SelectField } from "./select-field.tsx";

/** Above a list: one filter of the API's ("All" or one value) and a Refresh button. */
export function FilterToolbar<T extends string>(props: {
  label: string;
  value: T | "";
  values: readonly T[];
  onChange(value: NoInfer<T> | ""): void;
  onRefresh(): void;
}) {
  return (
    <div class="toolbar">
      <SelectField<T | "">
        label={props.label}
        value={props.value}
        values={["", ...props.values]}
        optionLabel={(value) => value || "All"}
        onChange={props.onChange}
      />
      <button type="button" class="secondary" onClick={props.onRefresh}>
        Refresh
      </button>
    </div>
  );
}
