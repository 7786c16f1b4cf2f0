import { useEffect, useId } from "preact/hooks";
import { publicApi } from "../api.ts";
import { activeCreators, creatorLabel } from "../creators.ts";
import { useLoad } from "../hooks.ts";
import { ErrorNote } from "./notes.tsx";
import { SelectField } from "./select-field.tsx";

/**
 * The creator of a new stream, picked from the active creators of the public GET /api/v1/creators
 * (no key needed; the same server). While the list loads, when it cannot be read or when no
 * creator is available, the one option says so and a required select keeps the form from being
 * sent; the reason is also said next to it, with a way to ask again.
 */
export function CreatorPicker({ value, onChange }: { value: string; onChange(id: string): void }) {
  const hintId = useId();
  const list = useLoad(() => publicApi.GET("/creators"), []);
  const active = list.data ? activeCreators(list.data.creators) : [];
  const labels = new Map(active.map((creator) => [creator.id, creatorLabel(creator)]));
  // A creator picked before a reload that no longer lists them is no longer picked.
  useEffect(() => {
    if (list.data && value && !labels.has(value)) onChange("");
  }, [list.data]);
  const none = list.error
    ? "No creators: the list could not be loaded"
    : !list.data
      ? "Loading creators…"
      : active.length === 0
        ? "No creator is available"
        : "Choose a creator";
  const again = (
    <button type="button" class="secondary" onClick={list.reload}>
      Load the creators again
    </button>
  );
  return (
    <>
      <SelectField
        label="Creator"
        value={value}
        values={["", ...labels.keys()]}
        optionLabel={(id) => labels.get(id) ?? none}
        onChange={onChange}
        required
        describedBy={hintId}
      />
      <p class="hint" id={hintId}>
        The creators available now, as listed by GET /api/v1/creators; busy ones are left out.
      </p>
      {list.error && (
        <div class="field">
          <ErrorNote message={`The creators could not be loaded: ${list.error}`} />
          {again}
        </div>
      )}
      {list.data && active.length === 0 && (
        <div class="field">
          <p class="note">No creator is available right now, so no stream can be started. Try again later.</p>
          {again}
        </div>
      )}
    </>
  );
}
