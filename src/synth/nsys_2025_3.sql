-- Tables Sightline writes, with nsys 2025.3's (export schema 3.20.3) definitions,
-- taken verbatim from a real export (tests/fixtures/torch_work.sqlite).
CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
);
CREATE TABLE PROCESSES (
    -- Names and identifiers of processes captured in the report.

    globalPid                   INTEGER,                               -- Serialized GlobalId.
    pid                         INTEGER,                               -- The process ID.
    name                        TEXT                                   -- The process name.
);
CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
);
CREATE TABLE TARGET_INFO_GPU (
    vmId                        INTEGER   NOT NULL,                    -- Serialized GlobalId.
    id                          INTEGER   NOT NULL,                    -- Device ID.
    name                        TEXT,                                  -- Device name.
    busLocation                 TEXT,                                  -- PCI bus location.
    isDiscrete                  INTEGER,                               -- True if discrete, false if integrated.
    l2CacheSize                 INTEGER,                               -- Size of L2 cache (B).
    totalMemory                 INTEGER,                               -- Total amount of memory on the device (B).
    memoryBandwidth             INTEGER,                               -- Amount of memory transferred (B).
    clockRate                   INTEGER,                               -- Clock frequency (Hz).
    smCount                     INTEGER,                               -- Number of multiprocessors on the device.
    pwGpuId                     INTEGER,                               -- PerfWorks GPU ID.
    uuid                        TEXT,                                  -- Device UUID.
    luid                        INTEGER,                               -- Device LUID.
    chipName                    TEXT,                                  -- Chip name.
    cuDevice                    INTEGER,                               -- CUDA device ID.
    ctxswDevPath                TEXT,                                  -- GPU context switch device node path.
    ctrlDevPath                 TEXT,                                  -- GPU control device node path.
    revision                    INTEGER,                               -- Revision number.
    nodeMask                    INTEGER,                               -- Device node mask.
    constantMemory              INTEGER,                               -- Memory available on device for __constant__ variables (B).
    maxIPC                      INTEGER,                               -- Maximum instructions per count.
    maxRegistersPerBlock        INTEGER,                               -- Maximum number of 32-bit registers available per block.
    maxShmemPerBlock            INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerBlockOptin       INTEGER,                               -- Maximum optin shared memory per block.
    maxShmemPerSm               INTEGER,                               -- Maximum shared memory available per multiprocessor (B).
    maxRegistersPerSm           INTEGER,                               -- Maximum number of 32-bit registers available per multiprocessor.
    threadsPerWarp              INTEGER,                               -- Warp size in threads.
    asyncEngines                INTEGER,                               -- Number of asynchronous engines.
    maxWarpsPerSm               INTEGER,                               -- Maximum number of warps per multiprocessor.
    maxBlocksPerSm              INTEGER,                               -- Maximum number of blocks per multiprocessor.
    maxThreadsPerBlock          INTEGER,                               -- Maximum number of threads per block.
    maxBlockDimX                INTEGER,                               -- Maximum X-dimension of a block.
    maxBlockDimY                INTEGER,                               -- Maximum Y-dimension of a block.
    maxBlockDimZ                INTEGER,                               -- Maximum Z-dimension of a block.
    maxGridDimX                 INTEGER,                               -- Maximum X-dimension of a grid.
    maxGridDimY                 INTEGER,                               -- Maximum Y-dimension of a grid.
    maxGridDimZ                 INTEGER,                               -- Maximum Z-dimension of a grid.
    computeMajor                INTEGER,                               -- Major compute capability version number.
    computeMinor                INTEGER,                               -- Minor compute capability version number.
    smMajor                     INTEGER,                               -- Major multiprocessor version number.
    smMinor                     INTEGER                                -- Minor multiprocessor version number.
);
CREATE TABLE TARGET_INFO_CUDA_STREAM (
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    hwId                        INTEGER   NOT NULL,                    -- Hardware ID.
    vmId                        INTEGER   NOT NULL,                    -- VM ID.
    processId                   INTEGER   NOT NULL,                    -- Process ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    priority                    INTEGER   NOT NULL,                    -- Priority of the stream.
    flag                        INTEGER   NOT NULL                     -- REFERENCES ENUM_CUPTI_STREAM_TYPE(id)
);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER                                -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER,                               -- Virtual base address of the page/s being transferred.
    copyCount                   INTEGER                                -- The total number of memcopy operations traced in this record. In CUDA MemcpyBatchAsync APIs, multiple memcpy operations may be batched together for optimization purposes based on certain heuristics.
);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    value                       INTEGER   NOT NULL,                    -- Value assigned to memory.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes set (B).
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    memKind                     INTEGER                                -- REFERENCES ENUM_CUDA_MEM_KIND(id)
);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- Correlation ID of the synchronization API to which this result is associated.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    deprecatedSyncType          INTEGER,                               -- Deprecated, use syncType instead. For older report, REFERENCES ENUM_CUPTI_SYNC_TYPE(id)
    syncType                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUPTI_SYNC_TYPE(id)
    eventId                     INTEGER   NOT NULL,                    -- Event ID for which the synchronization API is called.
    eventSyncId                 INTEGER                                -- CUDA Event Sync ID to link the synchronization API to associated event record API.
);
CREATE TABLE CUPTI_ACTIVITY_KIND_CUDA_EVENT (
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- Correlation ID of the event record API to which this result is associated.
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    eventId                     INTEGER   NOT NULL,                    -- Event ID for which the event record API is called.
    eventSyncId                 INTEGER                                -- CUDA Event Sync ID to link event record API to related synchronization APIs.
);
CREATE TABLE CUDA_GRAPH_NODE_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    graphNodeId                 INTEGER   NOT NULL,                    -- Graph node ID.
    originalGraphNodeId         INTEGER                                -- Reference to the original graph node ID, if cloned node.
);
CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventType                   INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)
    rangeId                     INTEGER,                               -- Correlation ID returned from a nvtxRangeStart call.
    category                    INTEGER,                               -- User-controlled ID that can be used to group events.
    color                       INTEGER,                               -- Encoded ARGB color value.
    text                        TEXT,                                  -- Explicit name/text (non-registered string)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    endGlobalTid                INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain/string
    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    uint64Value                 INTEGER,                               -- One of possible payload value union members.
    int64Value                  INTEGER,                               -- One of possible payload value union members.
    doubleValue                 REAL,                                  -- One of possible payload value union members.
    uint32Value                 INTEGER,                               -- One of possible payload value union members.
    int32Value                  INTEGER,                               -- One of possible payload value union members.
    floatValue                  REAL,                                  -- One of possible payload value union members.
    jsonTextId                  INTEGER,                               -- One of possible payload value union members.
    jsonText                    TEXT,                                  -- One of possible payload value union members.
    binaryData                  TEXT                                   -- Binary payload. See docs for format.
);
CREATE TABLE OSRT_API (
    -- OS runtime libraries traced to gather information about low-level userspace APIs.

    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    nestingLevel                INTEGER,                               -- Zero-base index of the nesting level.
    callchainId                 INTEGER   NOT NULL                     -- REFERENCES OSRT_CALLCHAINS(id)
);
CREATE TABLE COMPOSITE_EVENTS (
    -- Thread sampling events.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID of the composite event.
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    cpu                         INTEGER,                               -- ID of CPU this thread was running on.
    threadState                 INTEGER,                               -- REFERENCES ENUM_SAMPLING_THREAD_STATE(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    cpuCycles                   INTEGER   NOT NULL                     -- Value of Performance Monitoring Unit (PMU) counter.
);
CREATE TABLE SAMPLING_CALLCHAINS (
    -- Callchain entries obtained from composite events, used to construct function table views.

    id                          INTEGER   NOT NULL,                    -- REFERENCES COMPOSITE_EVENTS(id)
    symbol                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    module                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Module name
    kernelMode                  INTEGER,                               -- True if kernel mode.
    thumbCode                   INTEGER,                               -- True if thumb code.
    unresolved                  INTEGER,                               -- True if the symbol was not resolved.
    specialEntry                INTEGER,                               -- True if artifical entry added during processing callchain.
    originalIP                  INTEGER,                               -- Instruction pointer value.
    unwindMethod                INTEGER,                               -- REFERENCES ENUM_STACK_UNWIND_METHOD(id)
    stackDepth                  INTEGER   NOT NULL,                    -- Zero-base index of the given function in call stack.

    PRIMARY KEY (id, stackDepth)
);
CREATE TABLE SCHED_EVENTS (
    -- Thread scheduling events.

    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    cpu                         INTEGER   NOT NULL,                    -- ID of CPU this thread was scheduled in or out.
    isSchedIn                   INTEGER   NOT NULL,                    -- 0 if thread was scheduled out, non-zero otherwise.
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    threadState                 INTEGER,                               -- REFERENCES ENUM_SAMPLING_THREAD_STATE(id)
    threadBlock                 INTEGER                                -- REFERENCES ENUM_SCHEDULING_THREAD_BLOCK(id)
);
CREATE TABLE META_DATA_EXPORT (
    -- information about nsys export process

    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
);
CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    -- Nsys event type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(0,'Unknown','Unknown');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(1,'CpuCycles','CpuCycles');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(2,'Instructions','Instructions');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(3,'CacheReferences','CacheReferences');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(4,'L1CacheDataWriteMisses','L1CacheDataWriteMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(5,'L1CacheDataReadMisses','L1CacheDataReadMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(6,'L1CacheInstructionMisses','L1CacheInstructionMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(7,'L2CacheDataWriteMisses','L2CacheDataWriteMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(8,'L2CacheDataReadMisses','L2CacheDataReadMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(9,'L2CacheInstructionMisses','L2CacheInstructionMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(10,'BranchInstructions','BranchInstructions');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(11,'BranchMisses','BranchMisses');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(12,'BusCycles','BusCycles');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(13,'CpuClock','CpuClock');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(14,'TaskClock','TaskClock');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(15,'PageFault','PageFault');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(16,'ContextSwitches','ContextSwitches');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(17,'CpuMigrations','CpuMigrations');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(18,'PageFaultsMin','PageFaultsMin');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(19,'PageFaultsMax','PageFaultsMax');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(20,'AlignmentFaults','AlignmentFaults');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(21,'EmulationFaults','EmulationFaults');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(22,'ThreadState','ThreadState');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(23,'Frames','Frames');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(24,'Annotations','Annotations');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(25,'SchedSwitch','SchedSwitch');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(26,'SchedWakeup','SchedWakeup');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(27,'Command','Command');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(28,'Mmap','Mmap');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(29,'MemUsage','MemUsage');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(30,'Emc','Emc');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(31,'Composite','Composite');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(32,'NvtxEvents','NvtxEvents');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(33,'NvtxCategory','NvtxCategory');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(34,'NvtxMark','NvtxMark');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(35,'NvtxPushRange','NvtxPushRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(36,'NvtxPopRange','NvtxPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(37,'NvtxStartRange','NvtxStartRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(38,'NvtxEndRange','NvtxEndRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(39,'NvtxThread','NvtxThread');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(40,'PowerRate','PowerRate');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(41,'Sched','Sched');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(42,'CpuCyclesSelf','CpuCyclesSelf');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(43,'CpuCyclesTotal','CpuCyclesTotal');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(44,'CpuCyclesSelfPlus','CpuCyclesSelfPlus');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(45,'Cuda','Cuda');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(46,'CudaDevice','CudaDevice');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(47,'TraceProcess','TraceProcess');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(48,'TraceFunctions','TraceFunctions');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(49,'Diagnostic','Diagnostic');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(50,'GlWorkload','GlWorkload');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(51,'BandwidthUsage','BandwidthUsage');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(52,'KhrDebugMark','KhrDebugMark');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(53,'KhrDebugPushRange','KhrDebugPushRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(54,'KhrDebugPopRange','KhrDebugPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(55,'KhrDebugGpuMark','KhrDebugGpuMark');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(56,'KhrDebugGpuPushRange','KhrDebugGpuPushRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(57,'KhrDebugGpuPopRange','KhrDebugGpuPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(58,'GpuCtxsw','GpuCtxsw');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(59,'NvtxPushPopRange','NvtxPushPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(60,'NvtxStartEndRange','NvtxStartEndRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(61,'ProfTime','ProfTime');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(62,'KhrDebugPushPopRange','KhrDebugPushPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(63,'KhrDebugGpuPushPopRange','KhrDebugGpuPushPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(64,'NvtxtCategory','NvtxtCategory');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(65,'NvtxtMark','NvtxtMark');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(66,'NvtxtPushRange','NvtxtPushRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(67,'NvtxtPopRange','NvtxtPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(68,'NvtxtStartRange','NvtxtStartRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(69,'NvtxtEndRange','NvtxtEndRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(70,'NvtxtPushPopRange','NvtxtPushPopRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(71,'NvtxtStartEndRange','NvtxtStartEndRange');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(72,'NvtxtMetaThread','NvtxtMetaThread');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(73,'NvtxtMetaProcess','NvtxtMetaProcess');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(74,'NvtxtMetaFileDisplay','NvtxtMetaFileDisplay');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(75,'NvtxDomainCreate','NvtxDomainCreate');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(76,'NvtxDomainDestroy','NvtxDomainDestroy');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(77,'NvnGpuCmdBuf','NvnGpuCmdBuf');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(78,'TraceVSync','TraceVSync');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(79,'CudaDeviceKernel','CudaDeviceKernel');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(80,'CudaDeviceMemory','CudaDeviceMemory');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(81,'Pmu','Pmu');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(82,'NvnGpuDraw','NvnGpuDraw');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(83,'NvnGpuCompute','NvnGpuCompute');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(84,'NvnGpuDebug','NvnGpuDebug');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(85,'OS runtime libraries','OS runtime libraries');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(86,'CuDNN','CuDNN');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(87,'CuBLAS','CuBLAS');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(88,'NvMedia','NvMedia');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(89,'OpenACC','OpenACC');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(90,'Correlation','Correlation');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(91,'DX12','DX12');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(92,'DX12Workload','DX12Workload');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(93,'PmuRawEvent','PmuRawEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(94,'GraphicsFrame','GraphicsFrame');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(95,'Vulkan','Vulkan');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(96,'VulkanWorkload','VulkanWorkload');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(97,'NvtxNameCudaDevice','NvtxNameCudaDevice');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(98,'NvtxNameCudaContext','NvtxNameCudaContext');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(99,'NvtxNameCudaStream','NvtxNameCudaStream');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(100,'SystemEvent','SystemEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(101,'GpuMemoryEvent','GpuMemoryEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(102,'DX12CreateObject','DX12CreateObject');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(103,'VulkanCreateObject','VulkanCreateObject');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(104,'UnitTraceEvent','UnitTraceEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(105,'CustomETWEvent','CustomETWEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(106,'CudaSyncEvent','CudaSyncEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(107,'SLIEvent','SLIEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(108,'CudaBacktrace','CudaBacktrace');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(109,'WddmEvent','WddmEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(110,'DX11','DX11');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(111,'DX11CreateObject','DX11CreateObject');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(112,'DXGI','DXGI');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(113,'CudaGraphNodeCreation','CudaGraphNodeCreation');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(114,'OpenMP','OpenMP');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(115,'UncorePmuEvent','UncorePmuEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(116,'UncorePmuCarmel','UncorePmuCarmel');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(117,'CudaDeviceMemoryUsage','CudaDeviceMemoryUsage');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(118,'ETWDxgKrnlEvent','ETWDxgKrnlEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(119,'CudaUvmCpuPageFaultEvent','CudaUvmCpuPageFaultEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(120,'CudaUvmGpuPageFaultEvent','CudaUvmGpuPageFaultEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(121,'NICMetricsValuesEvent','NICMetricsValuesEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(122,'NICMetricsListEvent','NICMetricsListEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(123,'InterruptHandler','InterruptHandler');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(124,'NVENC','NVENC');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(125,'NVDEC','NVDEC');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(126,'nvJPEG','nvJPEG');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(127,'CudaEventRecord','CudaEventRecord');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(128,'PerfEventCountEvent','PerfEventCountEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(129,'CudaDeviceMemoryPool','CudaDeviceMemoryPool');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(130,'CudaDeviceGraph','CudaDeviceGraph');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(131,'CudaGraphExecCreation','CudaGraphExecCreation');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(132,'CudaGraphCreation','CudaGraphCreation');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(133,'CudaGraphClone','CudaGraphClone');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(134,'GpuMemoryTransferEvent','GpuMemoryTransferEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(135,'GlTrace','GlTrace');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(136,'GpuVideoEngineWorkload','GpuVideoEngineWorkload');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(137,'IBSwitchMetricsValuesEvent','IBSwitchMetricsValuesEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(138,'GenericEvent','GenericEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(139,'UncorePmuT23xScf','UncorePmuT23xScf');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(140,'UncorePmuT23xDsu','UncorePmuT23xDsu');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(141,'IBSwitchCongestionEvent','IBSwitchCongestionEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(142,'CudaDeviceMemcpy','CudaDeviceMemcpy');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(143,'PerfMetricValueEvent','PerfMetricValueEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(144,'OpenXREvent','OpenXREvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(145,'TegraInternalEvent','TegraInternalEvent');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(146,'TraceStartFinish','TraceStartFinish');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(147,'Syscall','Syscall');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(148,'CudaConfidentialComputeKeyRotation','CudaConfidentialComputeKeyRotation');
INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES(149,'CudaGraphExecNodeSetParams','CudaGraphExecNodeSetParams');
CREATE TABLE ENUM_NSYS_EVENT_CLASS (
    -- Nsys event class labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(0,'TRACE_PROCESS_EVENT_CUDA_RUNTIME','CUDA runtime');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(1,'TRACE_PROCESS_EVENT_CUDA_DRIVER','CUDA driver');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(2,'TRACE_PROCESS_EVENT_GL','GL');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(3,'TRACE_PROCESS_EVENT_TSP_OVERHEAD','TSP overhead');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(4,'TRACE_PROCESS_EVENT_GL_DEBUG','GL debug');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(5,'TRACE_PROCESS_EVENT_GL_WORKLOAD','GL workload');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(6,'TRACE_PROCESS_EVENT_NVTX_START','NVTX start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(7,'TRACE_PROCESS_EVENT_NVTX_FINISH','NVTX finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(8,'TRACE_PROCESS_EVENT_GL_START','GL start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(9,'TRACE_PROCESS_EVENT_GL_FINISH','GL finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(10,'TRACE_PROCESS_EVENT_CUDA_START','CUDA start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(11,'TRACE_PROCESS_EVENT_CUDA_FINISH','CUDA finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(12,'TRACE_PROCESS_EVENT_CUDA_INIT_ERROR','CUDA init error');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(13,'TRACE_PROCESS_EVENT_CUDA_EGL_DRIVER','CUDA EGL driver');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(18,'TRACE_PROCESS_EVENT_VSYNC','Vsync');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(26,'TRACE_PROCESS_EVENT_CUDA_API','CUDA API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(27,'TRACE_PROCESS_EVENT_OS_RUNTIME','OSRT runtime');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(28,'TRACE_PROCESS_EVENT_CUDNN','cuDNN');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(29,'TRACE_PROCESS_EVENT_CUBLAS','cuBLAS');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(31,'TRACE_PROCESS_EVENT_OS_RUNTIME_START','OSRT start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(32,'TRACE_PROCESS_EVENT_OS_RUNTIME_FINISH','OSRT finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(33,'TRACE_PROCESS_EVENT_CUDNN_START','cuDNN start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(34,'TRACE_PROCESS_EVENT_CUDNN_FINISH','cuDNN finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(35,'TRACE_PROCESS_EVENT_CUBLAS_START','cuBLAS start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(36,'TRACE_PROCESS_EVENT_CUBLAS_FINISH','cuBLAS finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(37,'TRACE_PROCESS_EVENT_THREAD_BLOCK','Thread block');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(38,'TRACE_PROCESS_EVENT_NVMEDIA','NVmedia');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(39,'TRACE_PROCESS_EVENT_NVMEDIA_START','NVmedia start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(40,'TRACE_PROCESS_EVENT_NVMEDIA_FINISH','NVmedia finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(41,'TRACE_PROCESS_EVENT_DX12_API','DX12 API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(42,'TRACE_PROCESS_EVENT_DX12_WORKLOAD','DX12 workload');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(43,'TRACE_PROCESS_EVENT_DX12_START','DX12 start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(44,'TRACE_PROCESS_EVENT_DX12_FINISH','DX12 finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(45,'TRACE_PROCESS_EVENT_OPENACC_START','OpenACC start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(46,'TRACE_PROCESS_EVENT_OPENACC_FINISH','OpenACC finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(47,'TRACE_PROCESS_EVENT_OPENACC_INIT_ERROR','OpenACC init error');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(48,'TRACE_PROCESS_EVENT_OPENACC','OpenACC');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(49,'TRACE_PROCESS_EVENT_CPU_FPS','CPU FPS');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(50,'TRACE_PROCESS_EVENT_GPU_FPS','GPU FPS');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(51,'TRACE_PROCESS_EVENT_GL_MULTI_ERROR','GL multi-error');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(52,'TRACE_PROCESS_EVENT_DX12_DISPLAY','DX12 display');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(53,'TRACE_PROCESS_EVENT_VULKAN_API','Vulkan API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(54,'TRACE_PROCESS_EVENT_VULKAN_WORKLOAD','Vulkan workload');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(55,'TRACE_PROCESS_EVENT_VULKAN_START','Vulkan start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(56,'TRACE_PROCESS_EVENT_VULKAN_FINISH','Vulkan finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(57,'TRACE_PROCESS_EVENT_SYSTEM_EVENT','System event');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(58,'TRACE_PROCESS_EVENT_GPU_MEMORY','GPU memory');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(59,'TRACE_PROCESS_EVENT_DX12_CREATE_OBJECT','DX12 create object');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(60,'TRACE_PROCESS_EVENT_VULKAN_CREATE_OBJECT','Vulkan create object');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(61,'TRACE_PROCESS_EVENT_CUSTOM_ETW_TRACE','Custom ETW trace');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(62,'TRACE_PROCESS_EVENT_SLI','SLI');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(63,'TRACE_PROCESS_EVENT_SLI_START','SLI start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(64,'TRACE_PROCESS_EVENT_SLI_FINISH','SLI finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(65,'TRACE_PROCESS_EVENT_DX12_DEBUG_API','DX12 debug API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(66,'TRACE_PROCESS_EVENT_VULKAN_DEBUG_API','Vulkan debug API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(67,'TRACE_PROCESS_EVENT_CUDABACKTRACE','CUDA backtrace');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(68,'TRACE_PROCESS_EVENT_CUDABACKTRACE_START','CUDA backtrace start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(69,'TRACE_PROCESS_EVENT_CUDABACKTRACE_FINISH','CUDA backtrace finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(70,'TRACE_PROCESS_EVENT_WDDM','WDDM');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(71,'TRACE_PROCESS_EVENT_DX11_API','DX11 API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(72,'TRACE_PROCESS_EVENT_DX11_START','DX11 start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(73,'TRACE_PROCESS_EVENT_DX11_FINISH','DX11 finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(74,'TRACE_PROCESS_EVENT_DX11_CREATE_OBJECT','DX11 create object');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(75,'TRACE_PROCESS_EVENT_DX11_DEBUG_API','DX11 debug API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(76,'TRACE_PROCESS_EVENT_DXCOMMON_API','DX common API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(77,'TRACE_PROCESS_EVENT_CUDA_GRAPH_NODE_CREATION','CUDA graph node creation');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(78,'TRACE_PROCESS_EVENT_OPENMP','OpenMP');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(79,'TRACE_PROCESS_EVENT_OPENMP_START','OpenMP start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(80,'TRACE_PROCESS_EVENT_OPENMP_FINISH','OpenMP finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(81,'TRACE_PROCESS_EVENT_NVAPI','NV API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(82,'TRACE_PROCESS_EVENT_ETWDXGKRNL','ETW DXG KRNL');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(83,'TRACE_PROCESS_EVENT_NVENC','NVENC');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(84,'TRACE_PROCESS_EVENT_NVENC_START','NVENC start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(85,'TRACE_PROCESS_EVENT_NVENC_FINISH','NVENC finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(86,'TRACE_PROCESS_EVENT_NVDEC','NVDEC');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(87,'TRACE_PROCESS_EVENT_NVDEC_START','NVDEC start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(88,'TRACE_PROCESS_EVENT_NVDEC_FINISH','NVDEC finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(89,'TRACE_PROCESS_EVENT_NVJPEG','nvJPEG');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(90,'TRACE_PROCESS_EVENT_NVJPEG_START','nvJPEG start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(91,'TRACE_PROCESS_EVENT_NVJPEG_FINISH','nvJPEG finish');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(92,'TRACE_PROCESS_EVENT_DX12_BATCH_WORKLOAD','DX12 batch workload');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(93,'TRACE_PROCESS_EVENT_VULKAN_BATCH_WORKLOAD','Vulkan batch workload');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(94,'TRACE_PROCESS_EVENT_CUDA_GRAPHEXEC_CREATION','CUDA graph exec creation');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(95,'TRACE_PROCESS_EVENT_CUDA_GRAPH_CREATION','CUDA graph creation');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(96,'TRACE_PROCESS_EVENT_CUDA_GRAPH_CLONE','CUDA graph clone');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(107,'TRACE_PROCESS_EVENT_SYSCALL','Syscall');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(108,'TRACE_PROCESS_EVENT_TEGRA_INTERNAL','Tegra Internal API');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(109,'TRACE_PROCESS_EVENT_TEGRA_INTERNAL_START','Tegra Internal API start');
INSERT INTO ENUM_NSYS_EVENT_CLASS VALUES(110,'TRACE_PROCESS_EVENT_TEGRA_INTERNAL_FINISH','Tegra Internal API finish');
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (
    -- CUDA memcpy operation labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(0,'CUDA_MEMCPY_KIND_UNKNOWN','Unknown');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(1,'CUDA_MEMCPY_KIND_HTOD','Host-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(2,'CUDA_MEMCPY_KIND_DTOH','Device-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(3,'CUDA_MEMCPY_KIND_HTOA','Host-to-Array');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(4,'CUDA_MEMCPY_KIND_ATOH','Array-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(5,'CUDA_MEMCPY_KIND_ATOA','Array-to-Array');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(6,'CUDA_MEMCPY_KIND_ATOD','Array-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(7,'CUDA_MEMCPY_KIND_DTOA','Device-to-Array');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(8,'CUDA_MEMCPY_KIND_DTOD','Device-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(9,'CUDA_MEMCPY_KIND_HTOH','Host-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(10,'CUDA_MEMCPY_KIND_PTOP','Peer-to-Peer');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(11,'CUDA_MEMCPY_KIND_UVM_HTOD','Unified Host-to-Device');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(12,'CUDA_MEMCPY_KIND_UVM_DTOH','Unified Device-to-Host');
INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES(13,'CUDA_MEMCPY_KIND_UVM_DTOD','Unified Device-to-Device');
CREATE TABLE ENUM_CUDA_MEM_KIND (
    -- CUDA memory kind labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(0,'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE','Pageable');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(1,'CUDA_MEMOPR_MEMORY_KIND_PINNED','Pinned');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(2,'CUDA_MEMOPR_MEMORY_KIND_DEVICE','Device');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(3,'CUDA_MEMOPR_MEMORY_KIND_ARRAY','Array');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(4,'CUDA_MEMOPR_MEMORY_KIND_MANAGED','Managed');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(5,'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC','Device Static');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(6,'CUDA_MEMOPR_MEMORY_KIND_MANAGED_STATIC','Managed Static');
INSERT INTO ENUM_CUDA_MEM_KIND VALUES(7,'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN','Unknown');
CREATE TABLE ENUM_CUPTI_SYNC_TYPE (
    -- CUPTI synchronization type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(0,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN','Unknown');
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(1,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE','Event sync');
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(2,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT','Stream wait sync');
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(3,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE','Stream sync');
INSERT INTO ENUM_CUPTI_SYNC_TYPE VALUES(4,'CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE','Context sync');
CREATE TABLE ENUM_CUPTI_STREAM_TYPE (
    -- CUPTI stream type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES(0,'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_UNKNOWN','Unknown stream type');
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES(1,'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT','Default stream');
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES(2,'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING','Non-blocking stream');
INSERT INTO ENUM_CUPTI_STREAM_TYPE VALUES(3,'CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL','Null stream');
CREATE TABLE ENUM_CUDA_KERNEL_LAUNCH_TYPE (
    -- CUDA kernel launch type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES(0,'CUDA_KERNEL_LAUNCH_TYPE_UNKNOWN','Unknown');
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES(1,'CUDA_KERNEL_LAUNCH_TYPE_REGULAR','Regular');
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES(2,'CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE','Coop Single Device');
INSERT INTO ENUM_CUDA_KERNEL_LAUNCH_TYPE VALUES(3,'CUDA_KERNEL_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE','Coop Multi Device');
CREATE TABLE ENUM_CUDA_FUNC_CACHE_CONFIG (
    -- CUDA function cache config labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES(0,'CU_FUNC_CACHE_PREFER_NONE','None');
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES(1,'CU_FUNC_CACHE_PREFER_SHARED','Shared');
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES(2,'CU_FUNC_CACHE_PREFER_L1','L1');
INSERT INTO ENUM_CUDA_FUNC_CACHE_CONFIG VALUES(3,'CU_FUNC_CACHE_PREFER_EQUAL','Equal');
CREATE TABLE ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG (
    -- CUDA shared memory limit config labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
);
INSERT INTO ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG VALUES(0,'CUDA_SHARED_MEM_LIMIT_DEFAULT','Default');
INSERT INTO ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG VALUES(1,'CUDA_SHARED_MEM_LIMIT_OPTIN','Opt in');
