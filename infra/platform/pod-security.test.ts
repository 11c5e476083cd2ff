// The Pod Security labels and the Pod Security Standards' controls as the check implements them: a restricted pod,
// then one change at a time, each caught by the control the Kubernetes documentation names, at the level that has it.
import { enforcedLevel, POD_SECURITY_LABEL_KEYS, type PodSpecUnderCheck, podSecurityLabels, podSecurityViolations, strictestLevel } from "./pod-security";

const sc = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } };
const restrictedPod = (): PodSpecUnderCheck => ({
  securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
  volumes: [{ name: "tmp", emptyDir: {} }, { name: "config", configMap: { name: "c" } }],
  containers: [{ name: "app", securityContext: structuredClone(sc) }],
});
const change = (edit: (p: PodSpecUnderCheck) => void) => {
  const p = restrictedPod();
  edit(p);
  return p;
};

describe("Pod Security labels", () => {
  test("enforce, warn and audit at one level, each with the pinned version", () => {
    expect(podSecurityLabels("baseline")).toEqual({
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/enforce-version": "v1.30",
      "pod-security.kubernetes.io/warn": "baseline",
      "pod-security.kubernetes.io/warn-version": "v1.30",
      "pod-security.kubernetes.io/audit": "baseline",
      "pod-security.kubernetes.io/audit-version": "v1.30",
    });
    expect(Object.keys(podSecurityLabels("restricted")).sort()).toEqual([...POD_SECURITY_LABEL_KEYS].sort());
    expect(enforcedLevel(podSecurityLabels("restricted"))).toBe("restricted");
    expect(enforcedLevel({})).toBe("privileged");
  });
});

describe("Pod Security Standards controls", () => {
  test("a pod with the platform's secure defaults passes restricted", () => {
    expect(podSecurityViolations("restricted", restrictedPod())).toEqual([]);
    expect(strictestLevel(restrictedPod())).toBe("restricted");
  });

  // Baseline controls: each change fails baseline (so restricted too).
  test.each<[string, (p: PodSpecUnderCheck) => void]>([
    ["Host Namespaces", (p) => (p.hostNetwork = true)],
    ["Host Namespaces", (p) => (p.hostPID = true)],
    ["Privileged Containers", (p) => (p.containers[0]!.securityContext!.privileged = true)],
    ["Capabilities", (p) => (p.containers[0]!.securityContext!.capabilities!.add = ["SYS_ADMIN"])],
    ["HostPath Volumes", (p) => p.volumes!.push({ name: "logs", hostPath: { path: "/var/log" } })],
    ["Host Ports", (p) => (p.containers[0]!.ports = [{ hostPort: 9100 }])],
    ["AppArmor", (p) => (p.securityContext!.appArmorProfile = { type: "Unconfined" })],
    ["SELinux", (p) => (p.containers[0]!.securityContext!.seLinuxOptions = { type: "spc_t" })],
    ["/proc Mount Type", (p) => (p.containers[0]!.securityContext!.procMount = "Unmasked")],
    ["Seccomp", (p) => (p.securityContext!.seccompProfile = { type: "Unconfined" })],
    ["Sysctls", (p) => (p.securityContext!.sysctls = [{ name: "kernel.msgmax" }])],
    ["HostProcess", (p) => (p.containers[0]!.securityContext!.windowsOptions = { hostProcess: true })],
  ])("baseline: %s", (control, edit) => {
    const pod = change(edit);
    expect(podSecurityViolations("baseline", pod).map((v) => v.control)).toContain(control);
    expect(strictestLevel(pod)).toBe("privileged");
  });

  test("SELinux types as of v1.30: container_engine_t is refused (allowed from v1.31)", () => {
    const with_ = (type: string) => change((p) => (p.containers[0]!.securityContext!.seLinuxOptions = { type }));
    expect(podSecurityViolations("baseline", with_("container_t"))).toEqual([]);
    expect(podSecurityViolations("baseline", with_("container_engine_t")).map((v) => v.control)).toEqual(["SELinux"]);
  });

  test("baseline admits a safe sysctl, an added CHOWN, and the AppArmor runtime default or an empty value", () => {
    const pod = change((p) => {
      p.securityContext!.sysctls = [{ name: "net.ipv4.ip_unprivileged_port_start" }];
      p.containers[0]!.securityContext!.capabilities!.add = ["CHOWN"];
    });
    expect(podSecurityViolations("baseline", pod, { "container.apparmor.security.beta.kubernetes.io/app": "runtime/default" })).toEqual([]);
    expect(podSecurityViolations("baseline", pod, { "container.apparmor.security.beta.kubernetes.io/app": "" })).toEqual([]);
    expect(podSecurityViolations("baseline", pod, { "container.apparmor.security.beta.kubernetes.io/app": "unconfined" }).map((v) => v.control)).toEqual(["AppArmor"]);
  });

  // Restricted controls: each change passes baseline and fails restricted.
  test.each<[string, (p: PodSpecUnderCheck) => void]>([
    ["Volume Types", (p) => p.volumes!.push({ name: "nfs", nfs: { server: "x", path: "/" } })],
    ["Privilege Escalation", (p) => delete p.containers[0]!.securityContext!.allowPrivilegeEscalation],
    ["Running as Non-root", (p) => (p.containers[0]!.securityContext!.runAsNonRoot = false)],
    [
      "Running as Non-root",
      (p) => {
        // Not on the pod, and an init container without it.
        delete p.securityContext!.runAsNonRoot;
        p.initContainers = [{ name: "init", securityContext: { ...sc, runAsNonRoot: undefined } }];
      },
    ],
    // An explicit false on the pod, though every container says true.
    ["Running as Non-root", (p) => (p.securityContext!.runAsNonRoot = false)],
    ["Running as Non-root user", (p) => (p.containers[0]!.securityContext!.runAsUser = 0)],
    [
      "Seccomp",
      (p) => {
        delete p.securityContext!.seccompProfile;
        p.initContainers = [{ name: "init", securityContext: { ...sc, seccompProfile: undefined } }];
      },
    ],
    ["Capabilities", (p) => (p.containers[0]!.securityContext!.capabilities = { drop: ["NET_RAW"] })],
    ["Capabilities", (p) => (p.containers[0]!.securityContext!.capabilities!.add = ["CHOWN"])],
  ])("restricted: %s", (control, edit) => {
    const pod = change(edit);
    expect(podSecurityViolations("baseline", pod)).toEqual([]);
    expect(podSecurityViolations("restricted", pod).map((v) => v.control)).toContain(control);
    expect(strictestLevel(pod)).toBe("baseline");
  });

  test("restricted admits NET_BIND_SERVICE, and runAsNonRoot set on every container instead of the pod", () => {
    const pod = change((p) => {
      delete p.securityContext!.runAsNonRoot;
      p.containers[0]!.securityContext!.capabilities!.add = ["NET_BIND_SERVICE"];
    });
    expect(podSecurityViolations("restricted", pod)).toEqual([]);
  });
});
