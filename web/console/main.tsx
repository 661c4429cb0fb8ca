import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes } from 'react-router';
import { SessionProvider, useSession } from './api/session';
import { Layout } from './components/layout';
import { SignIn } from './screens/SignIn';
import { Instances } from './screens/Instances';
import { Health } from './screens/Health';
import { Users, UserDetail } from './screens/Users';
import { Rooms, RoomDetail } from './screens/Rooms';
import { AuditTimeline } from './screens/Audit';
import { Roles } from './screens/Roles';
import { Cursors } from './screens/Cursors';
import { Files } from './screens/Files';
import { Beams } from './screens/Beams';
import { Feeds } from './screens/Feeds';
import { Webhooks } from './screens/Webhooks';
import { Export } from './screens/Export';
import { Import } from './screens/Import';
import { Moderation } from './screens/Moderation';
import './styles.css';

function Home() {
  const session = useSession();
  if (session.instance) return <Navigate to="/users" replace />;
  if (session.deployment) return <Navigate to="/instances" replace />;
  return <Navigate to="/sign-in" replace />;
}

function App() {
  return (
    <Routes>
      <Route path="/sign-in" element={<SignIn />} />
      <Route element={<Layout />}>
        <Route index element={<Home />} />
        <Route path="instances" element={<Instances />} />
        <Route path="health" element={<Health />} />
        <Route path="users" element={<Users />} />
        <Route path="users/:userId" element={<UserDetail />} />
        <Route path="rooms" element={<Rooms />} />
        <Route path="rooms/:roomId" element={<RoomDetail />} />
        <Route path="audit/:kind/:id" element={<AuditTimeline />} />
        <Route path="audit" element={<AuditTimeline />} />
        <Route path="roles" element={<Roles />} />
        <Route path="cursors" element={<Cursors />} />
        <Route path="files" element={<Files />} />
        <Route path="beams" element={<Beams />} />
        <Route path="feeds" element={<Feeds />} />
        <Route path="webhooks" element={<Webhooks />} />
        <Route path="moderation" element={<Moderation />} />
        <Route path="export" element={<Export />} />
        <Route path="import" element={<Import />} />
        <Route path="*" element={<Home />} />
      </Route>
    </Routes>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter basename="/console">
      <SessionProvider>
        <App />
      </SessionProvider>
    </BrowserRouter>
  </StrictMode>,
);
