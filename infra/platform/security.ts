// The platform's secure defaults for pods it declares directly, defined once: non-root, no privilege escalation, no
// capabilities, read-only root filesystem, the runtime's default seccomp profile. User ids are fixed to the image's
// numeric user where the cluster lets pods choose (runAsNonRoot can then verify it without reading /etc/passwd), and
// left to the cluster where it assigns them (OpenShift's restricted-v2, `cluster:fixedUserIds: false`).

/** The numeric user and group an image runs as, or undefined when the cluster assigns them. */
export interface PodIdentity {
  readonly uid: number;
  readonly gid: number;
}

export function containerSecurityContext(identity?: PodIdentity) {
  return {
    runAsNonRoot: true,
    ...(identity ? { runAsUser: identity.uid, runAsGroup: identity.gid } : {}),
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    privileged: false,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
  };
}

/** Pod-level: `fsGroup` makes mounted Secrets readable by the container's group (mode 0440). */
export function podSecurityContext(identity?: PodIdentity) {
  return {
    runAsNonRoot: true,
    ...(identity ? { runAsUser: identity.uid, runAsGroup: identity.gid, fsGroup: identity.gid } : {}),
    seccompProfile: { type: "RuntimeDefault" },
  };
}
