import { lazy, Suspense, type ComponentProps } from 'react';

// Screens a first paint of a conversation does not need, each in its own chunk, fetched
// the first time it is shown (the settings screens with their forms, the first-run
// screen, the agent session form, the diff of a file edit).
const SettingsViewChunk = lazy(() => import('./SettingsView').then((m) => ({ default: m.SettingsView })));
const OnboardingChunk = lazy(() => import('./Onboarding').then((m) => ({ default: m.Onboarding })));
const NewAgentSessionFormChunk = lazy(() => import('./NewAgentSessionForm').then((m) => ({ default: m.NewAgentSessionForm })));
const DiffViewChunk = lazy(() => import('./DiffView').then((m) => ({ default: m.DiffView })));

function Loading({ what }: { what: string }) {
  return (
    <div className="center-screen muted" role="status">
      Loading {what}…
    </div>
  );
}

export function SettingsView(props: ComponentProps<typeof SettingsViewChunk>) {
  return (
    <Suspense fallback={<Loading what="settings" />}>
      <SettingsViewChunk {...props} />
    </Suspense>
  );
}

export function Onboarding(props: ComponentProps<typeof OnboardingChunk>) {
  return (
    <Suspense fallback={<Loading what="setup" />}>
      <OnboardingChunk {...props} />
    </Suspense>
  );
}

export function NewAgentSessionForm(props: ComponentProps<typeof NewAgentSessionFormChunk>) {
  return (
    <Suspense fallback={<Loading what="the form" />}>
      <NewAgentSessionFormChunk {...props} />
    </Suspense>
  );
}

export function DiffView(props: ComponentProps<typeof DiffViewChunk>) {
  return (
    <Suspense fallback={<p className="muted small">Loading the diff…</p>}>
      <DiffViewChunk {...props} />
    </Suspense>
  );
}
