import { useState } from "preact/hooks";
import { api, codeOf, messageOf } from "../api.ts";
import { ActionForm } from "../components/action-form.tsx";
import { PasswordField } from "../components/password-field.tsx";
import { SelectField } from "../components/select-field.tsx";
import { useAction } from "../hooks.ts";
import { modePath, navigate } from "../route.ts";
import { useSession } from "../session.ts";

/** Where to go after signing in: the page asked for, if it is one of the dashboard's. */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get("next");
  return next?.startsWith("/dashboard/") && !next.startsWith("/dashboard/sign-in")
    ? next
    : modePath("test", "overview");
}

/** A brand the email and password fit, as a `brand_required` refusal names them. */
interface BrandChoice {
  name: string;
  brandId: string;
}

/** The brands a `brand_required` message names: "… brands: Acme (brand_id …), Beta (brand_id …). …". */
function brandsNamed(message: string): BrandChoice[] {
  return [...message.matchAll(/([^:,]+?) \(brand_id ([0-9a-f-]{36})\)/g)].map((match) => ({
    name: match[1]!.trim(),
    brandId: match[2]!,
  }));
}

/**
 * Email and password; then, when they are those of members of several brands, which brand
 * (brand_required); then the authenticator's code when the server asks for it (totp_required).
 */
export function SignInPage() {
  const { update } = useSession();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [needsCode, setNeedsCode] = useState(false);
  const [brands, setBrands] = useState<BrandChoice[]>([]);
  const [brandId, setBrandId] = useState("");
  const signIn = useAction(
    () =>
      api.POST("/session", {
        body: {
          email,
          password,
          ...(brandId ? { brand_id: brandId } : {}),
          ...(needsCode ? { totp_code: code.trim() } : {}),
        },
      }),
    async (session) => {
      await update(session);
      navigate(nextPath(), { replace: true });
    },
    (refusal) => {
      const refusedFor = codeOf(refusal);
      if (refusedFor === "brand_required") {
        const named = brandsNamed(messageOf(refusal));
        setBrands(named);
        setBrandId(named[0]?.brandId ?? "");
        return named.length > 0;
      }
      if (refusedFor !== "totp_required") return false;
      setNeedsCode(true);
      return true;
    },
  );

  return (
    <main id="content" class="narrow">
      <h1>Sign in to the dashboard</h1>
      <ActionForm action={signIn} submitLabel={needsCode ? "Verify and sign in" : "Sign in"}>
        {!needsCode && (
          <>
            <label>
              Email
              <input
                type="email"
                autoComplete="username"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            </label>
            <PasswordField label="Password" autoComplete="current-password" value={password} onInput={setPassword} />
            {brands.length > 0 && (
              <>
                <SelectField
                  label="Brand"
                  value={brandId}
                  values={brands.map((brand) => brand.brandId)}
                  optionLabel={(id) => brands.find((brand) => brand.brandId === id)?.name ?? id}
                  onChange={setBrandId}
                  describedBy="brand-hint"
                />
                <p class="hint" id="brand-hint">
                  You are a member of several brands with this email and password: choose the one to sign in to.
                </p>
              </>
            )}
          </>
        )}
        {needsCode && (
          <>
            <label>
              Authentication code
              <input
                autoComplete="one-time-code"
                required
                aria-describedby="code-hint"
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            </label>
            <p class="hint" id="code-hint">
              The 6-digit code from your authenticator app, or one of your recovery codes.
            </p>
          </>
        )}
      </ActionForm>
      <p class="muted">No account? Ask an owner of your brand, or the operator, for an invitation.</p>
    </main>
  );
}
