// Agent text as Markdown (GitHub flavour: tables, task lists, strikethrough), rendered to React elements,
// never to an HTML string: raw HTML in the text is dropped, not interpreted, so `<img onerror=…>` is inert.
// Links keep only http(s) and mailto targets and open in a new tab without handing over `window.opener`;
// images are not loaded (an agent could otherwise make the browser call any address): they become links.
import type { ReactNode } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";

const SAFE_SCHEMES = ["http:", "https:", "mailto:"];

/** The URL when its scheme is http, https or mailto; anything else (javascript:, data:, relative) is dropped. */
export function safeUrl(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return SAFE_SCHEMES.includes(parsed.protocol) ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

function Link({ href, children }: { href?: string; children?: ReactNode }) {
  const target = href ? safeUrl(href) : undefined;
  if (!target) return <span className="md-link-dropped">{children}</span>;
  return (
    <a href={target} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

function Image({ src, alt }: { src?: string | Blob; alt?: string }) {
  const target = typeof src === "string" ? safeUrl(src) : undefined;
  const label = `image: ${alt || target || "unavailable"}`;
  return target ? <Link href={target}>{label}</Link> : <span className="md-link-dropped">{label}</span>;
}

const COMPONENTS: Components = {
  a: ({ href, children }) => <Link href={href}>{children}</Link>,
  img: ({ src, alt }) => <Image src={src} alt={alt} />,
  table: ({ children }) => (
    <div className="md-table">
      <table>{children}</table>
    </div>
  ),
};

export default function Markdown({ text }: { text: string }) {
  return (
    <div className="md">
      <ReactMarkdown remarkPlugins={[remarkGfm]} skipHtml components={COMPONENTS}>
        {text}
      </ReactMarkdown>
    </div>
  );
}
