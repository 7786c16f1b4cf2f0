import { useEffect, useRef, useState } from "preact/hooks";

/** The name of the file the codes are downloaded as. */
export const RECOVERY_CODES_FILE = "live-stream-hosting-recovery-codes.txt";

/** The downloaded file: whose codes they are, when they were made, how to use them, one code a line. */
export function recoveryCodesText(
  codes: readonly string[],
  account: { email: string; brand: string },
  made: Date,
): string {
  return [
    "Live Stream Hosting dashboard: recovery codes",
    `Account: ${account.email} (${account.brand})`,
    `Made: ${made.toISOString()}`,
    "",
    "Each code signs you in once, in place of a code from your authenticator app.",
    "Keep them somewhere safe. New codes, or turning two-factor off, make these stop working.",
    "",
    ...codes,
    "",
  ].join("\n");
}

/**
 * Recovery codes the server shows once (two-factor turned on, or new codes): each in a list, a
 * Copy button (the codes, one a line, for a password manager) and a Download button (a .txt file
 * made here in the browser: nothing more is asked of the server), and a warning that they cannot
 * be shown again.
 */
export function RecoveryCodes(props: {
  codes: readonly string[];
  account: { email: string; brand: string };
  onDone(): void;
}) {
  const [said, setSaid] = useState("");
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [props.codes]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.codes.join("\n"));
      setSaid(`Copied the ${props.codes.length} codes to the clipboard.`);
    } catch {
      setSaid("Copying was refused by the browser: download the codes, or select them and copy them.");
    }
  };
  const download = () => {
    const text = recoveryCodesText(props.codes, props.account, new Date());
    const url = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = RECOVERY_CODES_FILE;
    link.hidden = true;
    document.body.append(link);
    link.click();
    link.remove();
    // The browser has taken the file; the address can go once this task is over.
    setTimeout(() => URL.revokeObjectURL(url), 0);
    setSaid(`Downloaded ${RECOVERY_CODES_FILE}.`);
  };
  return (
    <section class="once" aria-labelledby="recovery-title">
      <h3 id="recovery-title" tabIndex={-1} ref={heading}>
        Recovery codes
      </h3>
      <p class="warning">
        <strong>Save these now:</strong> they are shown only this once. Each signs you in once in place of a code from
        your app.
      </p>
      <ul class="codes" data-testid="recovery-codes">
        {props.codes.map((value) => (
          <li key={value}>
            <code>{value}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <button type="button" onClick={copy}>
          Copy codes
        </button>
        <button type="button" onClick={download}>
          Download .txt
        </button>
      </div>
      <p role="status" class="muted">
        {said}
      </p>
      <button type="button" class="secondary" onClick={props.onDone}>
        I have saved them
      </button>
    </section>
  );
}
