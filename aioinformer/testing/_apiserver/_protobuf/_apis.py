"""Protobuf message tables of meta/v1 and the API groups beside the core group.

Facts from the Go types of kubernetes/api and kubernetes/apimachinery v0.37.0-beta.0 (the
``protobuf`` and ``json`` struct tags, pointer or not), each field checked against the
package's ``generated.proto``. Packages: ``meta`` (``meta.k8s.io/v1``), ``apps``, ``batch``,
``rbac`` (``rbac.authorization.k8s.io``), ``networking`` (``networking.k8s.io``),
``policy``, ``scheduling`` (``scheduling.k8s.io``), ``authn`` (``authentication.k8s.io``),
``as1``/``as2`` (``autoscaling`` v1/v2), ``coordination`` (``coordination.k8s.io``) and
``events`` (``events.k8s.io``), all ``v1`` unless named. Syntax: :mod:`._protobuf._wire`.
"""

from __future__ import annotations

from ._wire import register

__all__: list[str] = []


register(
    "meta",
    """
DeleteOptions: 1 gracePeriodSeconds i*, 2 preconditions Preconditions*, 3 orphanDependents b*, 4
    propagationPolicy s*, 5 dryRun [s], 6 ignoreStoreReadErrorWithClusterBreakingPotential b*
ObjectMeta: 1 name s, 2 generateName s, 3 namespace s, 4 selfLink s, 5 uid s, 6 resourceVersion s,
    7 generation i, 8 creationTimestamp T, 9 deletionTimestamp T*, 10 deletionGracePeriodSeconds
    i*, 11 labels {s}, 12 annotations {s}, 13 ownerReferences [OwnerReference], 14 finalizers [s],
    17 managedFields [ManagedFieldsEntry]
Preconditions: 1 uid s*, 2 resourceVersion s*
OwnerReference: 5 apiVersion s!, 1 kind s!, 3 name s!, 4 uid s!, 6 controller b*, 7
    blockOwnerDeletion b*
ManagedFieldsEntry: 1 manager s, 2 operation s, 3 apiVersion s, 4 time T*, 6 fieldsType s, 7
    fieldsV1 F1*, 8 subresource s
Condition: 1 type s!, 2 status s!, 3 observedGeneration i, 4 lastTransitionTime T!, 5 reason s!, 6
    message s!
LabelSelector: 1 matchLabels {s}, 2 matchExpressions [LabelSelectorRequirement]
LabelSelectorRequirement: 1 key s!, 2 operator s!, 3 values [s]
""",
)

register(
    "apps",
    """
Deployment: 1 metadata meta.ObjectMeta!, 2 spec DeploymentSpec!, 3 status DeploymentStatus!
StatefulSet: 1 metadata meta.ObjectMeta!, 2 spec StatefulSetSpec!, 3 status StatefulSetStatus!
DaemonSet: 1 metadata meta.ObjectMeta!, 2 spec DaemonSetSpec!, 3 status DaemonSetStatus!
ReplicaSet: 1 metadata meta.ObjectMeta!, 2 spec ReplicaSetSpec!, 3 status ReplicaSetStatus!
DeploymentSpec: 1 replicas i*, 2 selector meta.LabelSelector*!, 3 template core.PodTemplateSpec!, 4
    strategy DeploymentStrategy!, 5 minReadySeconds i, 6 revisionHistoryLimit i*, 7 paused b, 9
    progressDeadlineSeconds i*
DeploymentStatus: 1 observedGeneration i, 2 replicas i, 3 updatedReplicas i, 7 readyReplicas i, 4
    availableReplicas i, 5 unavailableReplicas i, 9 terminatingReplicas i*, 6 conditions
    [DeploymentCondition], 8 collisionCount i*
StatefulSetSpec: 1 replicas i*, 2 selector meta.LabelSelector*!, 3 template core.PodTemplateSpec!,
    4 volumeClaimTemplates [core.PersistentVolumeClaim], 5 serviceName s!, 6 podManagementPolicy s,
    7 updateStrategy StatefulSetUpdateStrategy!, 8 revisionHistoryLimit i*, 9 minReadySeconds i, 10
    persistentVolumeClaimRetentionPolicy StatefulSetPersistentVolumeClaimRetentionPolicy*, 11
    ordinals StatefulSetOrdinals*
StatefulSetStatus: 1 observedGeneration i, 2 replicas i!, 3 readyReplicas i, 4 currentReplicas i, 5
    updatedReplicas i, 6 currentRevision s, 7 updateRevision s, 9 collisionCount i*, 10 conditions
    [StatefulSetCondition], 11 availableReplicas i!
DaemonSetSpec: 1 selector meta.LabelSelector*!, 2 template core.PodTemplateSpec!, 3 updateStrategy
    DaemonSetUpdateStrategy!, 4 minReadySeconds i, 6 revisionHistoryLimit i*
DaemonSetStatus: 1 currentNumberScheduled i!, 2 numberMisscheduled i!, 3 desiredNumberScheduled i!,
    4 numberReady i!, 5 observedGeneration i, 6 updatedNumberScheduled i, 7 numberAvailable i, 8
    numberUnavailable i, 9 collisionCount i*, 10 conditions [DaemonSetCondition]
ReplicaSetSpec: 1 replicas i*, 4 minReadySeconds i, 2 selector meta.LabelSelector*!, 3 template
    core.PodTemplateSpec!
ReplicaSetStatus: 1 replicas i!, 2 fullyLabeledReplicas i, 4 readyReplicas i, 5 availableReplicas
    i, 7 terminatingReplicas i*, 3 observedGeneration i, 6 conditions [ReplicaSetCondition]
DeploymentStrategy: 1 type s, 2 rollingUpdate RollingUpdateDeployment*
DeploymentCondition: 1 type s!, 2 status s!, 6 lastUpdateTime T!, 7 lastTransitionTime T!, 4 reason
    s, 5 message s
StatefulSetUpdateStrategy: 1 type s, 2 rollingUpdate RollingUpdateStatefulSetStrategy*
StatefulSetPersistentVolumeClaimRetentionPolicy: 1 whenDeleted s, 2 whenScaled s
StatefulSetOrdinals: 1 start i!
StatefulSetCondition: 1 type s!, 2 status s!, 3 lastTransitionTime T!, 4 reason s, 5 message s
DaemonSetUpdateStrategy: 1 type s, 2 rollingUpdate RollingUpdateDaemonSet*
DaemonSetCondition: 1 type s!, 2 status s!, 3 lastTransitionTime T!, 4 reason s, 5 message s
ReplicaSetCondition: 1 type s!, 2 status s!, 3 lastTransitionTime T!, 4 reason s, 5 message s
RollingUpdateDeployment: 1 maxUnavailable IS*, 2 maxSurge IS*
RollingUpdateStatefulSetStrategy: 1 partition i*, 2 maxUnavailable IS*
RollingUpdateDaemonSet: 1 maxUnavailable IS*, 2 maxSurge IS*
""",
)

register(
    "batch",
    """
Job: 1 metadata meta.ObjectMeta!, 2 spec JobSpec!, 3 status JobStatus!
CronJob: 1 metadata meta.ObjectMeta!, 2 spec CronJobSpec!, 3 status CronJobStatus!
JobSpec: 1 parallelism i*, 2 completions i*, 3 activeDeadlineSeconds i*, 11 podFailurePolicy
    PodFailurePolicy*, 16 successPolicy SuccessPolicy*, 7 backoffLimit i*, 12 backoffLimitPerIndex
    i*, 13 maxFailedIndexes i*, 4 selector meta.LabelSelector*, 5 manualSelector b*, 6 template
    core.PodTemplateSpec!, 8 ttlSecondsAfterFinished i*, 9 completionMode s*, 10 suspend b*, 14
    podReplacementPolicy s*, 15 managedBy s*
JobStatus: 1 conditions [JobCondition], 2 startTime T*, 3 completionTime T*, 4 active i, 5
    succeeded i, 6 failed i, 11 terminating i*, 7 completedIndexes s, 10 failedIndexes s*, 8
    uncountedTerminatedPods UncountedTerminatedPods*, 9 ready i*
CronJobSpec: 1 schedule s!, 8 timeZone s*, 2 startingDeadlineSeconds i*, 3 concurrencyPolicy s, 4
    suspend b*, 5 jobTemplate JobTemplateSpec!, 6 successfulJobsHistoryLimit i*, 7
    failedJobsHistoryLimit i*
CronJobStatus: 1 active [core.ObjectReference], 4 lastScheduleTime T*, 5 lastSuccessfulTime T*
PodFailurePolicy: 1 rules [PodFailurePolicyRule]!
SuccessPolicy: 1 rules [SuccessPolicyRule]!
JobCondition: 1 type s!, 2 status s!, 3 lastProbeTime T!, 4 lastTransitionTime T!, 5 reason s, 6
    message s
UncountedTerminatedPods: 1 succeeded [s], 2 failed [s]
JobTemplateSpec: 1 metadata meta.ObjectMeta!, 2 spec JobSpec!
PodFailurePolicyRule: 1 action s!, 2 onExitCodes PodFailurePolicyOnExitCodesRequirement*, 3
    onPodConditions [PodFailurePolicyOnPodConditionsPattern]
SuccessPolicyRule: 1 succeededIndexes s*, 2 succeededCount i*
PodFailurePolicyOnExitCodesRequirement: 1 containerName s*, 2 operator s!, 3 values [i]!
PodFailurePolicyOnPodConditionsPattern: 1 type s!, 2 status s!
""",
)

register(
    "rbac",
    """
Role: 1 metadata meta.ObjectMeta!, 2 rules [PolicyRule]!
ClusterRole: 1 metadata meta.ObjectMeta!, 2 rules [PolicyRule]!, 3 aggregationRule AggregationRule*
RoleBinding: 1 metadata meta.ObjectMeta!, 2 subjects [Subject], 3 roleRef RoleRef!
ClusterRoleBinding: 1 metadata meta.ObjectMeta!, 2 subjects [Subject], 3 roleRef RoleRef!
PolicyRule: 1 verbs [s]!, 2 apiGroups [s], 3 resources [s], 4 resourceNames [s], 5 nonResourceURLs
    [s]
AggregationRule: 1 clusterRoleSelectors [meta.LabelSelector]
Subject: 1 kind s!, 2 apiGroup s, 3 name s!, 4 namespace s
RoleRef: 1 apiGroup s!, 2 kind s!, 3 name s!
""",
)

register(
    "networking",
    """
Ingress: 1 metadata meta.ObjectMeta!, 2 spec IngressSpec!, 3 status IngressStatus!
IngressSpec: 4 ingressClassName s*, 1 defaultBackend IngressBackend*, 2 tls [IngressTLS], 3 rules
    [IngressRule]
IngressStatus: 1 loadBalancer IngressLoadBalancerStatus!
IngressBackend: 4 service IngressServiceBackend*, 3 resource core.TypedLocalObjectReference*
IngressTLS: 1 hosts [s], 2 secretName s
IngressRule: 1 host s, 2 - IngressRuleValue^
IngressLoadBalancerStatus: 1 ingress [IngressLoadBalancerIngress]
IngressServiceBackend: 1 name s!, 2 port ServiceBackendPort!
IngressRuleValue: 1 http HTTPIngressRuleValue*
IngressLoadBalancerIngress: 1 ip s, 2 hostname s, 4 ports [IngressPortStatus]
ServiceBackendPort: 1 name s, 2 number i
HTTPIngressRuleValue: 1 paths [HTTPIngressPath]!
IngressPortStatus: 1 port i!, 2 protocol s!, 3 error s*
HTTPIngressPath: 1 path s, 3 pathType s*!, 2 backend IngressBackend!
""",
)

register(
    "policy",
    """
PodDisruptionBudget: 1 metadata meta.ObjectMeta!, 2 spec PodDisruptionBudgetSpec!, 3 status
    PodDisruptionBudgetStatus!
Eviction: 1 metadata meta.ObjectMeta!, 2 deleteOptions meta.DeleteOptions*
PodDisruptionBudgetSpec: 1 minAvailable IS*, 2 selector meta.LabelSelector*, 3 maxUnavailable IS*,
    4 unhealthyPodEvictionPolicy s*
PodDisruptionBudgetStatus: 1 observedGeneration i, 2 disruptedPods {T}, 3 disruptionsAllowed i!, 4
    currentHealthy i!, 5 desiredHealthy i!, 6 expectedPods i!, 7 conditions [meta.Condition]
""",
)

register(
    "scheduling",
    """
PriorityClass: 1 metadata meta.ObjectMeta!, 2 value i!, 3 globalDefault b, 4 description s, 5
    preemptionPolicy s*
""",
)

register(
    "authn",
    """
TokenRequest: 1 metadata meta.ObjectMeta!, 2 spec TokenRequestSpec!, 3 status TokenRequestStatus!
TokenRequestSpec: 1 audiences [s]!, 4 expirationSeconds i*!, 3 boundObjectRef
    BoundObjectReference*!
TokenRequestStatus: 1 token s!, 2 expirationTimestamp T!
BoundObjectReference: 1 kind s, 2 apiVersion s, 3 name s, 4 uid s
""",
)

register(
    "as1",
    """
HorizontalPodAutoscaler: 1 metadata meta.ObjectMeta!, 2 spec HorizontalPodAutoscalerSpec!, 3 status
    HorizontalPodAutoscalerStatus!
Scale: 1 metadata meta.ObjectMeta!, 2 spec ScaleSpec!, 3 status ScaleStatus!
HorizontalPodAutoscalerSpec: 1 scaleTargetRef CrossVersionObjectReference!, 2 minReplicas i*, 3
    maxReplicas i!, 4 targetCPUUtilizationPercentage i*
HorizontalPodAutoscalerStatus: 1 observedGeneration i*, 2 lastScaleTime T*, 3 currentReplicas i!, 4
    desiredReplicas i!, 5 currentCPUUtilizationPercentage i*
ScaleSpec: 1 replicas i
ScaleStatus: 1 replicas i!, 2 selector s
CrossVersionObjectReference: 1 kind s!, 2 name s!, 3 apiVersion s
""",
)

register(
    "as2",
    """
HorizontalPodAutoscaler: 1 metadata meta.ObjectMeta!, 2 spec HorizontalPodAutoscalerSpec!, 3 status
    HorizontalPodAutoscalerStatus!
HorizontalPodAutoscalerSpec: 1 scaleTargetRef CrossVersionObjectReference!, 2 minReplicas i*, 3
    maxReplicas i!, 4 metrics [MetricSpec], 5 behavior HorizontalPodAutoscalerBehavior*
HorizontalPodAutoscalerStatus: 1 observedGeneration i*, 2 lastScaleTime T*, 3 currentReplicas i, 4
    desiredReplicas i!, 5 currentMetrics [MetricStatus]!, 6 conditions
    [HorizontalPodAutoscalerCondition]
CrossVersionObjectReference: 1 kind s!, 2 name s!, 3 apiVersion s
MetricSpec: 1 type s!, 2 object ObjectMetricSource*, 3 pods PodsMetricSource*, 4 resource
    ResourceMetricSource*, 7 containerResource ContainerResourceMetricSource*, 5 external
    ExternalMetricSource*
HorizontalPodAutoscalerBehavior: 1 scaleUp HPAScalingRules*, 2 scaleDown HPAScalingRules*
MetricStatus: 1 type s!, 2 object ObjectMetricStatus*, 3 pods PodsMetricStatus*, 4 resource
    ResourceMetricStatus*, 7 containerResource ContainerResourceMetricStatus*, 5 external
    ExternalMetricStatus*
HorizontalPodAutoscalerCondition: 1 type s!, 2 status s!, 3 lastTransitionTime T!, 4 reason s, 5
    message s, 6 observedGeneration i*
ObjectMetricSource: 1 describedObject CrossVersionObjectReference!, 2 target MetricTarget!, 3
    metric MetricIdentifier!
PodsMetricSource: 1 metric MetricIdentifier!, 2 target MetricTarget!
ResourceMetricSource: 1 name s!, 2 target MetricTarget!
ContainerResourceMetricSource: 1 name s!, 2 target MetricTarget!, 3 container s!
ExternalMetricSource: 1 metric MetricIdentifier!, 2 target MetricTarget!
HPAScalingRules: 3 stabilizationWindowSeconds i*, 1 selectPolicy s*, 2 policies [HPAScalingPolicy],
    4 tolerance Q*
ObjectMetricStatus: 1 metric MetricIdentifier!, 2 current MetricValueStatus!, 3 describedObject
    CrossVersionObjectReference!
PodsMetricStatus: 1 metric MetricIdentifier!, 2 current MetricValueStatus!
ResourceMetricStatus: 1 name s!, 2 current MetricValueStatus!
ContainerResourceMetricStatus: 1 name s!, 2 current MetricValueStatus!, 3 container s!
ExternalMetricStatus: 1 metric MetricIdentifier!, 2 current MetricValueStatus!
MetricTarget: 1 type s!, 2 value Q*, 3 averageValue Q*, 4 averageUtilization i*
MetricIdentifier: 1 name s!, 2 selector meta.LabelSelector*
HPAScalingPolicy: 1 type s!, 2 value i!, 3 periodSeconds i!
MetricValueStatus: 1 value Q*, 2 averageValue Q*, 3 averageUtilization i*
""",
)

register(
    "coordination",
    """
Lease: 1 metadata meta.ObjectMeta!, 2 spec LeaseSpec!
LeaseSpec: 1 holderIdentity s*, 2 leaseDurationSeconds i*, 3 acquireTime MT*, 4 renewTime MT*, 5
    leaseTransitions i*, 6 strategy s*, 7 preferredHolder s*
""",
)

register(
    "events",
    """
Event: 1 metadata meta.ObjectMeta!, 2 eventTime MT!, 3 series EventSeries*, 4 reportingController
    s, 5 reportingInstance s, 6 action s, 7 reason s, 8 regarding core.ObjectReference!, 9 related
    core.ObjectReference*, 10 note s, 11 type s, 12 deprecatedSource core.EventSource!, 13
    deprecatedFirstTimestamp T!, 14 deprecatedLastTimestamp T!, 15 deprecatedCount i
EventSeries: 1 count i!, 2 lastObservedTime MT!
""",
)
