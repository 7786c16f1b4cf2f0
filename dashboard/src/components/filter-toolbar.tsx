import type { ComponentChildren } from "preact";
import { SelectField } from "./select-field.tsx";

/** One of the API's filters: "All" (the empty value) or one value, each named by `optionLabel`. */
export function FilterSelect<T extends string>(props: {
  label: string;
  value: T | "";
  values: readonly T[];
  optionLabel?(value: NoInfer<T>): string;
  onChange(value: NoInfer<T> | ""): void;
}) {
  const { optionLabel } = props;
  return (
    <SelectField<T | "">
      label={props.label}
      value={props.value}
      values={["", ...props.values]}
      optionLabel={(value) => (value === "" ? "All" : optionLabel ? optionLabel(value as T) : value)}
      onChange={props.onChange}
    />
  );
}

/** Above a list: its filters and a Refresh button. */
export function Toolbar({ children, onRefresh }: { children: ComponentChildren; onRefresh(): void }) {
  return (
    <div class="toolbar">
      {children}
      <button type="button" class="secondary" onClick={onRefresh}>
        Refresh
      </button>
    </div>
  );
}

/** Above a list: one filter of the API's ("All" or one value) and a Refresh button. */
export function FilterToolbar<T extends string>(props: {
  label: string;
  value: T | "";
  values: readonly T[];
  onChange(value: NoInfer<T> | ""): void;
  onRefresh(): void;
}) {
  return (
    <Toolbar onRefresh={props.onRefresh}>
      <FilterSelect label={props.label} value={props.value} values={props.values} onChange={props.onChange} />
    </Toolbar>
  );
}
