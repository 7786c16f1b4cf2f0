import { useEffect, useRef, useState } from "preact/hooks";

/**
 * A secret the server shows once (an API key, a webhook's signing secret, an invitation link):
 * a copy button and a warning that it cannot be shown again.
 */
export function OnceSecret({ label, value, onDone }: { label: string; value: string; onDone(): void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("Copied to the clipboard.");
    } catch {
      setCopied("Copying was refused by the browser: select the text and copy it.");
    }
  };
  return (
    <section class="once" aria-labelledby="once-title">
      <h3 id="once-title" tabIndex={-1} ref={heading}>
        {label}
      </h3>
      <p class="warning">
        <strong>Copy it now:</strong> it is shown only this once and cannot be shown again.
      </p>
      <div class="secret-row">
        <code class="secret" data-testid="once-secret">
          {value}
        </code>
        <button type="button" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status" class="muted">
        {copied ?? ""}
      </p>
      <button type="button" class="secondary" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}
