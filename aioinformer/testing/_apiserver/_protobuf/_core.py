"""Protobuf message tables of ``k8s.io/api/core/v1`` (the closure of the kinds decoded).

Facts from the Go types of kubernetes/api v0.37.0-beta.0 (``core/v1/types.go``: the
``protobuf`` tag's field number, the ``json`` tag's name and ``omitempty``, pointer or not),
each field checked against ``core/v1/generated.proto`` (number, name, scalar or message
type, ``repeated``/``map``). The syntax is described in :mod:`._protobuf._wire`.
"""

from __future__ import annotations

from ._wire import register

__all__: list[str] = []

register(
    "core",
    """
Namespace: 1 metadata meta.ObjectMeta!, 2 spec NamespaceSpec!, 3 status NamespaceStatus!
ConfigMap: 1 metadata meta.ObjectMeta!, 4 immutable b*, 2 data {s}, 3 binaryData {y}
Secret: 1 metadata meta.ObjectMeta!, 5 immutable b*, 2 data {y}, 4 stringData {s}, 3 type s
Service: 1 metadata meta.ObjectMeta!, 2 spec ServiceSpec!, 3 status ServiceStatus!
ServiceAccount: 1 metadata meta.ObjectMeta!, 2 secrets [ObjectReference], 3 imagePullSecrets
    [LocalObjectReference], 4 automountServiceAccountToken b*
ResourceQuota: 1 metadata meta.ObjectMeta!, 2 spec ResourceQuotaSpec!, 3 status
    ResourceQuotaStatus!
Pod: 1 metadata meta.ObjectMeta!, 2 spec PodSpec!, 3 status PodStatus!
Event: 1 metadata meta.ObjectMeta!, 2 involvedObject ObjectReference!, 3 reason s, 4 message s, 5
    source EventSource!, 6 firstTimestamp T!, 7 lastTimestamp T!, 8 count i, 9 type s, 10 eventTime
    MT!, 11 series EventSeries*, 12 action s, 13 related ObjectReference*, 14 reportingComponent
    s!, 15 reportingInstance s!
Binding: 1 metadata meta.ObjectMeta!, 2 target ObjectReference!
NamespaceSpec: 1 finalizers [s]
NamespaceStatus: 1 phase s, 2 conditions [NamespaceCondition]
ServiceSpec: 1 ports [ServicePort], 2 selector {s}, 3 clusterIP s, 18 clusterIPs [s], 4 type s, 5
    externalIPs [s], 7 sessionAffinity s, 8 loadBalancerIP s, 9 loadBalancerSourceRanges [s], 10
    externalName s, 11 externalTrafficPolicy s, 12 healthCheckNodePort i, 13
    publishNotReadyAddresses b, 14 sessionAffinityConfig SessionAffinityConfig*, 19 ipFamilies [s],
    17 ipFamilyPolicy s*, 20 allocateLoadBalancerNodePorts b*, 21 loadBalancerClass s*, 22
    internalTrafficPolicy s*, 23 trafficDistribution s*
ServiceStatus: 1 loadBalancer LoadBalancerStatus!, 2 conditions [meta.Condition]
ObjectReference: 1 kind s, 2 namespace s, 3 name s, 4 uid s, 5 apiVersion s, 6 resourceVersion s, 7
    fieldPath s
LocalObjectReference: 1 name s
ResourceQuotaSpec: 1 hard {Q}, 2 scopes [s], 3 scopeSelector ScopeSelector*
ResourceQuotaStatus: 1 hard {Q}, 2 used {Q}
PodSpec: 1 volumes [Volume], 20 initContainers [Container], 2 containers [Container]!, 34
    ephemeralContainers [EphemeralContainer], 3 restartPolicy s, 4 terminationGracePeriodSeconds
    i*, 5 activeDeadlineSeconds i*, 6 dnsPolicy s, 7 nodeSelector {s}, 8 serviceAccountName s, 9
    serviceAccount s, 21 automountServiceAccountToken b*, 10 nodeName s, 11 hostNetwork b, 12
    hostPID b, 13 hostIPC b, 27 shareProcessNamespace b*, 14 securityContext PodSecurityContext*,
    15 imagePullSecrets [LocalObjectReference], 16 hostname s, 17 subdomain s, 18 affinity
    Affinity*, 19 schedulerName s, 22 tolerations [Toleration], 23 hostAliases [HostAlias], 24
    priorityClassName s, 25 priority i*, 26 dnsConfig PodDNSConfig*, 28 readinessGates
    [PodReadinessGate], 29 runtimeClassName s*, 30 enableServiceLinks b*, 31 preemptionPolicy s*,
    32 overhead {Q}, 33 topologySpreadConstraints [TopologySpreadConstraint], 35 setHostnameAsFQDN
    b*, 36 os PodOS*, 37 hostUsers b*, 38 schedulingGates [PodSchedulingGate], 39 resourceClaims
    [PodResourceClaim], 40 resources ResourceRequirements*, 41 hostnameOverride s*, 43
    schedulingGroup PodSchedulingGroup*
PodStatus: 17 observedGeneration i, 1 phase s, 2 conditions [PodCondition], 3 message s, 4 reason
    s, 11 nominatedNodeName s, 5 hostIP s, 16 hostIPs [HostIP], 6 podIP s, 12 podIPs [PodIP], 7
    startTime T*, 10 initContainerStatuses [ContainerStatus], 8 containerStatuses
    [ContainerStatus], 9 qosClass s, 13 ephemeralContainerStatuses [ContainerStatus], 14 resize s,
    15 resourceClaimStatuses [PodResourceClaimStatus], 18 extendedResourceClaimStatus
    PodExtendedResourceClaimStatus*, 19 allocatedResources {Q}, 20 resources ResourceRequirements*,
    21 nodeAllocatableResourceClaimStatuses [NodeAllocatableResourceClaimStatus]
EventSource: 1 component s, 2 host s
EventSeries: 1 count i, 2 lastObservedTime MT!
NamespaceCondition: 1 type s!, 2 status s!, 4 lastTransitionTime T!, 5 reason s, 6 message s
ServicePort: 1 name s, 2 protocol s, 6 appProtocol s*, 3 port i!, 4 targetPort IS!, 5 nodePort i
SessionAffinityConfig: 1 clientIP ClientIPConfig*
LoadBalancerStatus: 1 ingress [LoadBalancerIngress]
ScopeSelector: 1 matchExpressions [ScopedResourceSelectorRequirement]
Volume: 1 name s!, 2 - VolumeSource^
Container: 1 name s!, 2 image s, 3 command [s], 4 args [s], 5 workingDir s, 6 ports
    [ContainerPort], 19 envFrom [EnvFromSource], 7 env [EnvVar], 8 resources ResourceRequirements!,
    23 resizePolicy [ContainerResizePolicy], 24 restartPolicy s*, 25 restartPolicyRules
    [ContainerRestartRule], 9 volumeMounts [VolumeMount], 21 volumeDevices [VolumeDevice], 10
    livenessProbe Probe*, 11 readinessProbe Probe*, 22 startupProbe Probe*, 12 lifecycle
    Lifecycle*, 13 terminationMessagePath s, 20 terminationMessagePolicy s, 14 imagePullPolicy s,
    15 securityContext SecurityContext*, 16 stdin b, 17 stdinOnce b, 18 tty b
EphemeralContainer: 1 - EphemeralContainerCommon^, 2 targetContainerName s
PodSecurityContext: 1 seLinuxOptions SELinuxOptions*, 8 windowsOptions
    WindowsSecurityContextOptions*, 2 runAsUser i*, 6 runAsGroup i*, 3 runAsNonRoot b*, 4
    supplementalGroups [i], 12 supplementalGroupsPolicy s*, 5 fsGroup i*, 7 sysctls [Sysctl], 9
    fsGroupChangePolicy s*, 10 seccompProfile SeccompProfile*, 11 appArmorProfile AppArmorProfile*,
    13 seLinuxChangePolicy s*
Affinity: 1 nodeAffinity NodeAffinity*, 2 podAffinity PodAffinity*, 3 podAntiAffinity
    PodAntiAffinity*
Toleration: 1 key s, 2 operator s, 3 value s, 4 effect s, 5 tolerationSeconds i*
HostAlias: 1 ip s!, 2 hostnames [s]
PodDNSConfig: 1 nameservers [s], 2 searches [s], 3 options [PodDNSConfigOption]
PodReadinessGate: 1 conditionType s!
TopologySpreadConstraint: 1 maxSkew i!, 2 topologyKey s!, 3 whenUnsatisfiable s!, 4 labelSelector
    meta.LabelSelector*, 5 minDomains i*, 6 nodeAffinityPolicy s*, 7 nodeTaintsPolicy s*, 8
    matchLabelKeys [s]
PodOS: 1 name s!
PodSchedulingGate: 1 name s!
PodResourceClaim: 1 name s!, 3 resourceClaimName s*, 4 resourceClaimTemplateName s*
ResourceRequirements: 1 limits {Q}, 2 requests {Q}, 3 claims [ResourceClaim]
PodSchedulingGroup: 1 podGroupName s*
PodCondition: 1 type s!, 7 observedGeneration i, 2 status s!, 3 lastProbeTime T!, 4
    lastTransitionTime T!, 5 reason s, 6 message s
HostIP: 1 ip s!
PodIP: 1 ip s!
ContainerStatus: 1 name s!, 2 state ContainerState!, 3 lastState ContainerState!, 4 ready b!, 5
    restartCount i!, 6 image s!, 7 imageID s!, 8 containerID s, 9 started b*, 10 allocatedResources
    {Q}, 11 resources ResourceRequirements*, 12 volumeMounts [VolumeMountStatus], 13 user
    ContainerUser*, 14 allocatedResourcesStatus [ResourceStatus], 15 stopSignal s*
PodResourceClaimStatus: 1 name s!, 2 resourceClaimName s*
PodExtendedResourceClaimStatus: 1 requestMappings [ContainerExtendedResourceRequest]!, 2
    resourceClaimName s!
NodeAllocatableResourceClaimStatus: 1 resourceClaimName s!, 2 containers [s], 3 resources {Q}!
PodTemplateSpec: 1 metadata meta.ObjectMeta!, 2 spec PodSpec!
PersistentVolumeClaim: 1 metadata meta.ObjectMeta!, 2 spec PersistentVolumeClaimSpec!, 3 status
    PersistentVolumeClaimStatus!
ClientIPConfig: 1 timeoutSeconds i*
LoadBalancerIngress: 1 ip s, 2 hostname s, 3 ipMode s*, 4 ports [PortStatus]
ScopedResourceSelectorRequirement: 1 scopeName s!, 2 operator s!, 3 values [s]
VolumeSource: 1 hostPath HostPathVolumeSource*, 2 emptyDir EmptyDirVolumeSource*, 3
    gcePersistentDisk GCEPersistentDiskVolumeSource*, 4 awsElasticBlockStore
    AWSElasticBlockStoreVolumeSource*, 5 gitRepo GitRepoVolumeSource*, 6 secret
    SecretVolumeSource*, 7 nfs NFSVolumeSource*, 8 iscsi ISCSIVolumeSource*, 9 glusterfs
    GlusterfsVolumeSource*, 10 persistentVolumeClaim PersistentVolumeClaimVolumeSource*, 11 rbd
    RBDVolumeSource*, 12 flexVolume FlexVolumeSource*, 13 cinder CinderVolumeSource*, 14 cephfs
    CephFSVolumeSource*, 15 flocker FlockerVolumeSource*, 16 downwardAPI DownwardAPIVolumeSource*,
    17 fc FCVolumeSource*, 18 azureFile AzureFileVolumeSource*, 19 configMap
    ConfigMapVolumeSource*, 20 vsphereVolume VsphereVirtualDiskVolumeSource*, 21 quobyte
    QuobyteVolumeSource*, 22 azureDisk AzureDiskVolumeSource*, 23 photonPersistentDisk
    PhotonPersistentDiskVolumeSource*, 26 projected ProjectedVolumeSource*, 24 portworxVolume
    PortworxVolumeSource*, 25 scaleIO ScaleIOVolumeSource*, 27 storageos StorageOSVolumeSource*, 28
    csi CSIVolumeSource*, 29 ephemeral EphemeralVolumeSource*, 30 image ImageVolumeSource*
ContainerPort: 1 name s, 2 hostPort i, 3 containerPort i!, 4 protocol s, 5 hostIP s
EnvFromSource: 1 prefix s, 2 configMapRef ConfigMapEnvSource*, 3 secretRef SecretEnvSource*
EnvVar: 1 name s!, 2 value s, 3 valueFrom EnvVarSource*
ContainerResizePolicy: 1 resourceName s!, 2 restartPolicy s!
ContainerRestartRule: 1 action s, 2 exitCodes ContainerRestartRuleOnExitCodes*
VolumeMount: 1 name s!, 2 readOnly b, 7 recursiveReadOnly s*, 3 mountPath s!, 4 subPath s, 5
    mountPropagation s*, 6 subPathExpr s
VolumeDevice: 1 name s!, 2 devicePath s!
Probe: 1 - ProbeHandler^, 2 initialDelaySeconds i, 3 timeoutSeconds i, 4 periodSeconds i, 5
    successThreshold i, 6 failureThreshold i, 7 terminationGracePeriodSeconds i*
Lifecycle: 1 postStart LifecycleHandler*, 2 preStop LifecycleHandler*, 3 stopSignal s*
SecurityContext: 1 capabilities Capabilities*, 2 privileged b*, 3 seLinuxOptions SELinuxOptions*,
    10 windowsOptions WindowsSecurityContextOptions*, 4 runAsUser i*, 8 runAsGroup i*, 5
    runAsNonRoot b*, 6 readOnlyRootFilesystem b*, 7 allowPrivilegeEscalation b*, 9 procMount s*, 11
    seccompProfile SeccompProfile*, 12 appArmorProfile AppArmorProfile*
EphemeralContainerCommon: 1 name s!, 2 image s, 3 command [s], 4 args [s], 5 workingDir s, 6 ports
    [ContainerPort], 19 envFrom [EnvFromSource], 7 env [EnvVar], 8 resources ResourceRequirements!,
    23 resizePolicy [ContainerResizePolicy], 24 restartPolicy s*, 25 restartPolicyRules
    [ContainerRestartRule], 9 volumeMounts [VolumeMount], 21 volumeDevices [VolumeDevice], 10
    livenessProbe Probe*, 11 readinessProbe Probe*, 22 startupProbe Probe*, 12 lifecycle
    Lifecycle*, 13 terminationMessagePath s, 20 terminationMessagePolicy s, 14 imagePullPolicy s,
    15 securityContext SecurityContext*, 16 stdin b, 17 stdinOnce b, 18 tty b
SELinuxOptions: 1 user s, 2 role s, 3 type s, 4 level s
WindowsSecurityContextOptions: 1 gmsaCredentialSpecName s*, 2 gmsaCredentialSpec s*, 3
    runAsUserName s*, 4 hostProcess b*
Sysctl: 1 name s!, 2 value s!
SeccompProfile: 1 type s!, 2 localhostProfile s*
AppArmorProfile: 1 type s!, 2 localhostProfile s*
NodeAffinity: 1 requiredDuringSchedulingIgnoredDuringExecution NodeSelector*, 2
    preferredDuringSchedulingIgnoredDuringExecution [PreferredSchedulingTerm]
PodAffinity: 1 requiredDuringSchedulingIgnoredDuringExecution [PodAffinityTerm], 2
    preferredDuringSchedulingIgnoredDuringExecution [WeightedPodAffinityTerm]
PodAntiAffinity: 1 requiredDuringSchedulingIgnoredDuringExecution [PodAffinityTerm], 2
    preferredDuringSchedulingIgnoredDuringExecution [WeightedPodAffinityTerm]
PodDNSConfigOption: 1 name s, 2 value s*
ResourceClaim: 1 name s!, 2 request s
ContainerState: 1 waiting ContainerStateWaiting*, 2 running ContainerStateRunning*, 3 terminated
    ContainerStateTerminated*
VolumeMountStatus: 1 name s!, 2 mountPath s!, 3 readOnly b, 4 recursiveReadOnly s*, 5 volumeStatus
    VolumeStatus*
ContainerUser: 1 linux LinuxContainerUser*
ResourceStatus: 1 name s!, 2 resources [ResourceHealth]
ContainerExtendedResourceRequest: 1 containerName s!, 2 resourceName s!, 3 requestName s!
PersistentVolumeClaimSpec: 1 accessModes [s], 4 selector meta.LabelSelector*, 2 resources
    VolumeResourceRequirements!, 3 volumeName s, 5 storageClassName s*, 6 volumeMode s*, 7
    dataSource TypedLocalObjectReference*, 8 dataSourceRef TypedObjectReference*, 9
    volumeAttributesClassName s*
PersistentVolumeClaimStatus: 1 phase s, 2 accessModes [s], 3 capacity {Q}, 4 conditions
    [PersistentVolumeClaimCondition], 5 allocatedResources {Q}, 7 allocatedResourceStatuses {s}, 8
    currentVolumeAttributesClassName s*, 9 modifyVolumeStatus ModifyVolumeStatus*
TypedLocalObjectReference: 1 apiGroup s*!, 2 kind s!, 3 name s!
PortStatus: 1 port i!, 2 protocol s!, 3 error s*
HostPathVolumeSource: 1 path s!, 2 type s*
EmptyDirVolumeSource: 1 medium s, 2 sizeLimit Q*
GCEPersistentDiskVolumeSource: 1 pdName s!, 2 fsType s, 3 partition i, 4 readOnly b
AWSElasticBlockStoreVolumeSource: 1 volumeID s!, 2 fsType s, 3 partition i, 4 readOnly b
GitRepoVolumeSource: 1 repository s!, 2 revision s, 3 directory s
SecretVolumeSource: 1 secretName s, 2 items [KeyToPath], 3 defaultMode i*, 4 optional b*
NFSVolumeSource: 1 server s!, 2 path s!, 3 readOnly b
ISCSIVolumeSource: 1 targetPortal s!, 2 iqn s!, 3 lun i!, 4 iscsiInterface s, 5 fsType s, 6
    readOnly b, 7 portals [s], 8 chapAuthDiscovery b, 11 chapAuthSession b, 10 secretRef
    LocalObjectReference*, 12 initiatorName s*
GlusterfsVolumeSource: 1 endpoints s!, 2 path s!, 3 readOnly b
PersistentVolumeClaimVolumeSource: 1 claimName s!, 2 readOnly b
RBDVolumeSource: 1 monitors [s]!, 2 image s!, 3 fsType s, 4 pool s, 5 user s, 6 keyring s, 7
    secretRef LocalObjectReference*, 8 readOnly b
FlexVolumeSource: 1 driver s!, 2 fsType s, 3 secretRef LocalObjectReference*, 4 readOnly b, 5
    options {s}
CinderVolumeSource: 1 volumeID s!, 2 fsType s, 3 readOnly b, 4 secretRef LocalObjectReference*
CephFSVolumeSource: 1 monitors [s]!, 2 path s, 3 user s, 4 secretFile s, 5 secretRef
    LocalObjectReference*, 6 readOnly b
FlockerVolumeSource: 1 datasetName s, 2 datasetUUID s
DownwardAPIVolumeSource: 1 items [DownwardAPIVolumeFile], 2 defaultMode i*
FCVolumeSource: 1 targetWWNs [s], 2 lun i*, 3 fsType s, 4 readOnly b, 5 wwids [s]
AzureFileVolumeSource: 1 secretName s!, 2 shareName s!, 3 readOnly b
ConfigMapVolumeSource: 1 - LocalObjectReference^, 2 items [KeyToPath], 3 defaultMode i*, 4 optional
    b*
VsphereVirtualDiskVolumeSource: 1 volumePath s!, 2 fsType s, 3 storagePolicyName s, 4
    storagePolicyID s
QuobyteVolumeSource: 1 registry s!, 2 volume s!, 3 readOnly b, 4 user s, 5 group s, 6 tenant s
AzureDiskVolumeSource: 1 diskName s!, 2 diskURI s!, 3 cachingMode s*, 4 fsType s*, 5 readOnly b*, 6
    kind s*
PhotonPersistentDiskVolumeSource: 1 pdID s!, 2 fsType s
ProjectedVolumeSource: 1 sources [VolumeProjection]!, 2 defaultMode i*
PortworxVolumeSource: 1 volumeID s!, 2 fsType s, 3 readOnly b
ScaleIOVolumeSource: 1 gateway s!, 2 system s!, 3 secretRef LocalObjectReference*!, 4 sslEnabled b,
    5 protectionDomain s, 6 storagePool s, 7 storageMode s, 8 volumeName s, 9 fsType s, 10 readOnly
    b
StorageOSVolumeSource: 1 volumeName s, 2 volumeNamespace s, 3 fsType s, 4 readOnly b, 5 secretRef
    LocalObjectReference*
CSIVolumeSource: 1 driver s!, 2 readOnly b*, 3 fsType s*, 4 volumeAttributes {s}, 5
    nodePublishSecretRef LocalObjectReference*
EphemeralVolumeSource: 1 volumeClaimTemplate PersistentVolumeClaimTemplate*
ImageVolumeSource: 1 reference s, 2 pullPolicy s
ConfigMapEnvSource: 1 - LocalObjectReference^, 2 optional b*
SecretEnvSource: 1 - LocalObjectReference^, 2 optional b*
EnvVarSource: 1 fieldRef ObjectFieldSelector*, 2 resourceFieldRef ResourceFieldSelector*, 3
    configMapKeyRef ConfigMapKeySelector*, 4 secretKeyRef SecretKeySelector*, 5 fileKeyRef
    FileKeySelector*
ContainerRestartRuleOnExitCodes: 1 operator s, 2 values [i]
ProbeHandler: 1 exec ExecAction*, 2 httpGet HTTPGetAction*, 3 tcpSocket TCPSocketAction*, 4 grpc
    GRPCAction*
LifecycleHandler: 1 exec ExecAction*, 2 httpGet HTTPGetAction*, 3 tcpSocket TCPSocketAction*, 4
    sleep SleepAction*
Capabilities: 1 add [s], 2 drop [s]
NodeSelector: 1 nodeSelectorTerms [NodeSelectorTerm]!
PreferredSchedulingTerm: 1 weight i!, 2 preference NodeSelectorTerm!
PodAffinityTerm: 1 labelSelector meta.LabelSelector*, 2 namespaces [s], 3 topologyKey s!, 4
    namespaceSelector meta.LabelSelector*, 5 matchLabelKeys [s], 6 mismatchLabelKeys [s]
WeightedPodAffinityTerm: 1 weight i!, 2 podAffinityTerm PodAffinityTerm!
ContainerStateWaiting: 1 reason s, 2 message s
ContainerStateRunning: 1 startedAt T!
ContainerStateTerminated: 1 exitCode i!, 2 signal i, 3 reason s, 4 message s, 5 startedAt T!, 6
    finishedAt T!, 7 containerID s
VolumeStatus: 1 image ImageVolumeStatus*
LinuxContainerUser: 1 uid i!, 2 gid i!, 3 supplementalGroups [i]
ResourceHealth: 1 resourceID s!, 2 health s, 6 message s*
VolumeResourceRequirements: 1 limits {Q}, 2 requests {Q}
TypedObjectReference: 1 apiGroup s*!, 2 kind s!, 3 name s!, 4 namespace s*
PersistentVolumeClaimCondition: 1 type s!, 2 status s!, 3 lastProbeTime T!, 4 lastTransitionTime
    T!, 5 reason s, 6 message s
ModifyVolumeStatus: 1 targetVolumeAttributesClassName s, 2 status s!
KeyToPath: 1 key s!, 2 path s!, 3 mode i*
DownwardAPIVolumeFile: 1 path s!, 2 fieldRef ObjectFieldSelector*, 3 resourceFieldRef
    ResourceFieldSelector*, 4 mode i*
VolumeProjection: 1 secret SecretProjection*, 2 downwardAPI DownwardAPIProjection*, 3 configMap
    ConfigMapProjection*, 4 serviceAccountToken ServiceAccountTokenProjection*, 5
    clusterTrustBundle ClusterTrustBundleProjection*, 6 podCertificate PodCertificateProjection*
PersistentVolumeClaimTemplate: 1 metadata meta.ObjectMeta!, 2 spec PersistentVolumeClaimSpec!
ObjectFieldSelector: 1 apiVersion s, 2 fieldPath s!
ResourceFieldSelector: 1 containerName s, 2 resource s!, 3 divisor Q!
ConfigMapKeySelector: 1 - LocalObjectReference^, 2 key s!, 3 optional b*
SecretKeySelector: 1 - LocalObjectReference^, 2 key s!, 3 optional b*
FileKeySelector: 1 volumeName s!, 2 path s!, 3 key s!, 4 optional b*
ExecAction: 1 command [s]
HTTPGetAction: 1 path s, 2 port IS!, 3 host s, 4 scheme s, 5 httpHeaders [HTTPHeader]
TCPSocketAction: 1 port IS!, 2 host s
GRPCAction: 1 port i!, 2 service s*!
SleepAction: 1 seconds i!
NodeSelectorTerm: 1 matchExpressions [NodeSelectorRequirement], 2 matchFields
    [NodeSelectorRequirement]
ImageVolumeStatus: 1 imageRef s
SecretProjection: 1 - LocalObjectReference^, 2 items [KeyToPath], 4 optional b*
DownwardAPIProjection: 1 items [DownwardAPIVolumeFile]
ConfigMapProjection: 1 - LocalObjectReference^, 2 items [KeyToPath], 4 optional b*
ServiceAccountTokenProjection: 1 audience s, 2 expirationSeconds i*, 3 path s!
ClusterTrustBundleProjection: 1 name s*, 2 signerName s*, 3 labelSelector meta.LabelSelector*, 5
    optional b*, 4 path s!
PodCertificateProjection: 1 signerName s, 2 keyType s, 3 maxExpirationSeconds i*, 4
    credentialBundlePath s, 5 keyPath s, 6 certificateChainPath s, 7 userAnnotations {s}
HTTPHeader: 1 name s!, 2 value s!
NodeSelectorRequirement: 1 key s!, 2 operator s!, 3 values [s]
""",
)
