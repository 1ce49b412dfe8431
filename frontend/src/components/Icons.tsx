// Inline SVG icons (decorative unless a label is given by the caller).
type IconProps = { size?: number };

export function AutopilotGlyph({ size = 14 }: IconProps) {
  // A small paper plane: work that flies on its own.
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M1.5 7.4 14.6 1.6c.3-.1.6.2.4.5L9.3 14.5c-.1.3-.6.3-.7 0L6.9 9.2 1.5 8.1c-.4-.1-.4-.5 0-.7Zm5.9 1.3 1.3 3.9L12.9 3.4 7.4 8.7Z" fill="currentColor" />
    </svg>
  );
}

export function QuestionGlyph({ size = 14 }: IconProps) {
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <circle cx="8" cy="8" r="7.2" fill="currentColor" />
      <path d="M6.1 6.1a2 2 0 1 1 2.7 1.9c-.5.2-.8.6-.8 1.1v.5" stroke="#fff" strokeWidth="1.6" fill="none" strokeLinecap="round" />
      <circle cx="8" cy="11.8" r=".95" fill="#fff" />
    </svg>
  );
}

export function ShieldGlyph({ size = 14 }: IconProps) {
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M8 .8 14 3v4.6c0 3.6-2.5 6.4-6 7.6-3.5-1.2-6-4-6-7.6V3L8 .8Z" fill="currentColor" />
      <path d="M8 4v4.6" stroke="#fff" strokeWidth="1.7" strokeLinecap="round" />
      <circle cx="8" cy="11.2" r="1" fill="#fff" />
    </svg>
  );
}

export function FlagGlyph({ size = 14 }: IconProps) {
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M3 1.5v13M3 2h9l-2 3 2 3H3" stroke="currentColor" strokeWidth="1.6" fill="none" strokeLinejoin="round" />
    </svg>
  );
}

export function InfoGlyph({ size = 14 }: IconProps) {
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <circle cx="8" cy="8" r="7" stroke="currentColor" strokeWidth="1.4" fill="none" />
      <path d="M8 7v4.5" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
      <circle cx="8" cy="4.7" r="1" fill="currentColor" />
    </svg>
  );
}

export function MenuGlyph({ size = 18 }: IconProps) {
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M2 4h12M2 8h12M2 12h12" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" />
    </svg>
  );
}

export function CoinGlyph({ size = 14 }: IconProps) {
  // A coin: money, for a spent budget.
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <circle cx="8" cy="8" r="7.2" fill="currentColor" />
      <path d="M10.2 5.6c-.4-.6-1.2-1-2.2-1-1.3 0-2.2.7-2.2 1.6 0 2.2 4.6 1.2 4.6 3.5 0 1-1 1.7-2.4 1.7-1 0-1.9-.4-2.3-1.1M8 3.4v9.2" stroke="#fff" strokeWidth="1.3" fill="none" strokeLinecap="round" />
    </svg>
  );
}

export function FileGlyph({ size = 14 }: IconProps) {
  // A sheet with a folded corner: an attached file.
  return (
    <svg width={size} height={size} viewBox="0 0 16 16" aria-hidden="true" focusable="false">
      <path d="M3.5 1.5h6l3 3v10h-9Z" fill="none" stroke="currentColor" strokeWidth="1.3" strokeLinejoin="round" />
      <path d="M9.5 1.5v3h3" fill="none" stroke="currentColor" strokeWidth="1.3" strokeLinejoin="round" />
    </svg>
  );
}
