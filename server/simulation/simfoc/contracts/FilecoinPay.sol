// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// The ERC-20 calls Filecoin Pay makes on a payment token.
interface IPayToken {
    function balanceOf(address owner) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// What a rail's validator (FilecoinWarmStorageService) answers during settlement and termination,
/// the interface FilOzone/filecoin-pay src/FilecoinPayV1.sol declares as IValidator.
interface IRailValidator {
    struct ValidationResult {
        uint256 modifiedAmount;
        uint256 settleUpto;
        string note;
    }

    function validatePayment(uint256 railId, uint256 proposedAmount, uint256 fromEpoch, uint256 toEpoch, uint256 rate)
        external
        returns (ValidationResult memory result);

    function railTerminated(uint256 railId, address terminator, uint256 endEpoch) external;
}

/// Our stand-in for Filecoin Pay (FilOzone/filecoin-pay src/FilecoinPayV1.sol), written to the
/// filecoinPayV1 ABI the Synapse SDK uses. Accounts, operator approvals, rails with their lockup,
/// rate changes, settlement, fees and termination follow the real contract's rules; each rule says
/// where. Left out: native FIL as a payment token, ERC-3009 deposits and the fee auction's burnForFees.
contract FilecoinPay {
    uint256 public constant COMMISSION_MAX_BPS = 10000;
    // The network takes 1/200 (0.5 %) of every payment, rounded up (FilecoinPayV1.sol calculateAndPayFees).
    uint256 public constant NETWORK_FEE_NUMERATOR = 1;
    uint256 public constant NETWORK_FEE_DENOMINATOR = 200;
    uint88 private constant FIRST_AUCTION_START_PRICE = 0.0021 ether;

    struct Account {
        uint256 funds;
        // Funds set aside for rails: fixed lockups, rate × lockup period, and what has accrued but is not yet settled.
        uint256 lockupCurrent;
        // Sum of the payment rates of the payer's live rails.
        uint256 lockupRate;
        // The epoch up to which lockupRate has been added to lockupCurrent.
        uint256 lockupLastSettledAt;
    }

    struct RateChange {
        uint256 rate;
        uint256 untilEpoch;
    }

    struct Rail {
        address token;
        address from;
        address to;
        address operator;
        address validator;
        uint256 paymentRate;
        uint256 lockupPeriod;
        uint256 lockupFixed;
        uint256 settledUpTo;
        uint256 endEpoch;
        uint256 commissionRateBps;
        address serviceFeeRecipient;
        // Rates that applied before a change, each until (and including) an epoch; read from queueHead on.
        uint256 queueHead;
        RateChange[] queue;
    }

    struct RailView {
        address token;
        address from;
        address to;
        address operator;
        address validator;
        uint256 paymentRate;
        uint256 lockupPeriod;
        uint256 lockupFixed;
        uint256 settledUpTo;
        uint256 endEpoch;
        uint256 commissionRateBps;
        address serviceFeeRecipient;
    }

    struct OperatorApproval {
        bool isApproved;
        uint256 rateAllowance;
        uint256 lockupAllowance;
        uint256 rateUsage;
        uint256 lockupUsage;
        uint256 maxLockupPeriod;
    }

    struct RailInfo {
        uint256 railId;
        bool isTerminated;
        uint256 endEpoch;
    }

    struct AuctionInfo {
        uint88 startPrice;
        uint168 startTime;
    }

    struct Settlement {
        uint256 gross;
        uint256 net;
        uint256 commission;
        uint256 fee;
        uint256 finalEpoch;
        string note;
    }

    mapping(address token => mapping(address owner => Account)) public accounts;
    mapping(address token => mapping(address client => mapping(address operator => OperatorApproval))) public
        operatorApprovals;
    mapping(address token => AuctionInfo) public auctionInfo;

    mapping(uint256 railId => Rail) private rails;
    mapping(address token => mapping(address payer => uint256[])) private payerRails;
    mapping(address token => mapping(address payee => uint256[])) private payeeRails;
    uint256 private nextRailId = 1;
    uint256 private entered;

    event AccountLockupSettled(
        address indexed token, address indexed owner, uint256 lockupCurrent, uint256 lockupRate, uint256 lockupLastSettledAt
    );
    event OperatorApprovalUpdated(
        address indexed token,
        address indexed client,
        address indexed operator,
        bool approved,
        uint256 rateAllowance,
        uint256 lockupAllowance,
        uint256 maxLockupPeriod
    );
    event RailCreated(
        uint256 indexed railId,
        address indexed payer,
        address indexed payee,
        address token,
        address operator,
        address validator,
        address serviceFeeRecipient,
        uint256 commissionRateBps
    );
    event RailLockupModified(
        uint256 indexed railId, uint256 oldLockupPeriod, uint256 newLockupPeriod, uint256 oldLockupFixed, uint256 newLockupFixed
    );
    event RailOneTimePaymentProcessed(
        uint256 indexed railId, uint256 netPayeeAmount, uint256 operatorCommission, uint256 networkFee
    );
    event RailRateModified(uint256 indexed railId, uint256 oldRate, uint256 newRate);
    event RailSettled(
        uint256 indexed railId,
        uint256 totalSettledAmount,
        uint256 totalNetPayeeAmount,
        uint256 operatorCommission,
        uint256 networkFee,
        uint256 settledUpTo
    );
    event RailTerminated(uint256 indexed railId, address indexed by, uint256 endEpoch);
    event RailFinalized(uint256 indexed railId);
    event DepositRecorded(address indexed token, address indexed from, address indexed to, uint256 amount);
    event WithdrawRecorded(address indexed token, address indexed from, address indexed to, uint256 amount);

    // Error names and arguments of the published ABI (FilOzone/filecoin-pay src/Errors.sol).
    error CannotModifyTerminatedRailBeyondEndEpoch(uint256 railId, uint256 maxSettlementEpoch, uint256 blockNumber);
    error CannotSettleFutureEpochs(uint256 railId, uint256 maxAllowedEpoch, uint256 attemptedEpoch);
    error CannotSettleTerminatedRailBeforeMaxEpoch(uint256 railId, uint256 requiredBlock, uint256 currentBlock);
    error CommissionRateTooHigh(uint256 maxAllowed, uint256 actual);
    error CurrentLockupLessThanOldLockup(address token, address from, uint256 oldLockup, uint256 currentLockup);
    error InsufficientCurrentLockup(address token, address from, uint256 currentLockup, uint256 lockupReduction);
    error InsufficientFundsForOneTimePayment(address token, address from, uint256 required, uint256 actual);
    error InsufficientFundsForSettlement(address token, address from, uint256 available, uint256 required);
    error InsufficientLockupForSettlement(address token, address from, uint256 available, uint256 required);
    error InsufficientUnlockedFunds(uint256 available, uint256 requested);
    error InvalidRateChangeQueueState(uint256 nextRateChangeUntilEpoch, uint256 processedEpoch);
    error InvalidTerminatedRailModification(
        uint256 actualPeriod, uint256 actualLockupFixed, uint256 attemptedPeriod, uint256 attemptedLockupFixed
    );
    error LockupExceedsFundsInvariant(address token, address account, uint256 lockupCurrent, uint256 fundsCurrent);
    error LockupFixedIncreaseNotAllowedDueToInsufficientFunds(
        address token, address from, uint256 actualLockupFixed, uint256 attemptedLockupFixed
    );
    error LockupInconsistencyDuringRailFinalization(
        uint256 railId, address token, address from, uint256 expectedLockup, uint256 actualLockup
    );
    error LockupNotSettledRateChangeNotAllowed(
        uint256 railId, address from, bool isSettled, uint256 currentRate, uint256 attemptedRate
    );
    error LockupPeriodChangeNotAllowedDueToInsufficientFunds(
        address token, address from, uint256 actualLockupPeriod, uint256 attemptedLockupPeriod
    );
    error LockupPeriodExceedsOperatorMaximum(
        address token, address operator, uint256 maxAllowedPeriod, uint256 requestedPeriod
    );
    error LockupRateInconsistent(uint256 railId, address from, uint256 paymentRate, uint256 lockupRate);
    error LockupRateLessThanOldRate(uint256 railId, address from, uint256 lockupRate, uint256 oldRate);
    error MissingServiceFeeRecipient();
    error NativeTokenNotAccepted(uint256 sent);
    error NativeTokenNotSupported();
    error NoProgressInSettlement(uint256 railId, uint256 expectedSettledUpTo, uint256 actualSettledUpTo);
    error NotAuthorizedToTerminateRail(uint256 railId, address allowedClient, address allowedOperator, address caller);
    error OneTimePaymentExceedsLockup(uint256 railId, uint256 available, uint256 required);
    error OnlyRailClientAllowed(address expected, address caller);
    error OnlyRailOperatorAllowed(address expected, address caller);
    error OperatorLockupAllowanceExceeded(uint256 allowed, uint256 attemptedUsage);
    error OperatorNotApproved(address from, address operator);
    error OperatorRateAllowanceExceeded(uint256 allowed, uint256 attemptedUsage);
    error RailAlreadyTerminated(uint256 railId);
    error RailInactiveOrSettled(uint256 railId);
    error RailNotTerminated(uint256 railId);
    error RateChangeNotAllowedOnTerminatedRail(uint256 railId);
    error RateChangeQueueNotEmpty(uint256 nextUntilEpoch);
    error ReentrancyGuardReentrantCall();
    error SafeERC20FailedOperation(address token);
    error SignerMustBeMsgSender(address expected, address actual);
    error ValidatorModifiedAmountExceedsMaximum(uint256 railId, uint256 maxAllowed, uint256 attempted);
    error ValidatorSettledBeforeSegmentStart(uint256 railId, uint256 allowedStart, uint256 attemptedStart);
    error ValidatorSettledBeyondSegmentEnd(uint256 railId, uint256 allowedEnd, uint256 attemptedEnd);
    error ZeroAddressNotAllowed(string varName);

    modifier nonReentrant() {
        if (entered != 0) revert ReentrancyGuardReentrantCall();
        entered = 1;
        _;
        entered = 0;
    }

    modifier nonZero(address addr, string memory varName) {
        if (addr == address(0)) revert ZeroAddressNotAllowed(varName);
        _;
    }

    modifier railActive(uint256 railId) {
        if (rails[railId].from == address(0)) revert RailInactiveOrSettled(railId);
        _;
    }

    modifier onlyRailOperator(uint256 railId) {
        address operator = rails[railId].operator;
        if (operator != msg.sender) revert OnlyRailOperatorAllowed(operator, msg.sender);
        _;
    }

    /// As FilecoinPayV1.sol settleAccountLockupBeforeAndAfter: the owner's lockup is brought up to
    /// date before and after, and `full` demands it reach the current epoch (funds cover it).
    modifier settlesAccount(address token, address owner, bool full) {
        _checkAndSettle(token, owner, full);
        _;
        _checkAndSettle(token, owner, full);
    }

    /// As FilecoinPayV1.sol settleAccountLockupBeforeAndAfterForRail: the same for a rail's payer.
    modifier settlesRailPayer(uint256 railId, uint256 oneTimePayment) {
        (address token, address payer) = _railPayerBefore(railId, oneTimePayment);
        _;
        _checkAndSettle(token, payer, false);
    }

    // ---- Accounts ----

    function deposit(address token, address to, uint256 amount)
        external
        payable
        nonReentrant
        nonZero(to, "to")
        settlesAccount(token, to, false)
    {
        if (token == address(0)) revert NativeTokenNotSupported();
        if (msg.value != 0) revert NativeTokenNotAccepted(msg.value);
        amount = _pullIn(token, msg.sender, amount);
        accounts[token][to].funds += amount;
        emit DepositRecorded(token, msg.sender, to, amount);
    }

    /// The permit must be signed by `to`, whose tokens are pulled (FilecoinPayV1.sol depositWithPermit).
    function depositWithPermit(
        address token,
        address to,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external nonReentrant nonZero(to, "to") settlesAccount(token, to, false) {
        _depositWithPermit(token, to, amount, deadline, v, r, s);
    }

    /// Approves the operator for the caller, who must be `to`, then deposits with the permit.
    function depositWithPermitAndApproveOperator(
        address token,
        address to,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s,
        address operator,
        uint256 rateAllowance,
        uint256 lockupAllowance,
        uint256 maxLockupPeriod
    ) external nonReentrant {
        if (operator == address(0)) revert ZeroAddressNotAllowed("operator");
        if (to == address(0)) revert ZeroAddressNotAllowed("to");
        if (to != msg.sender) revert SignerMustBeMsgSender(msg.sender, to);
        _checkAndSettle(token, to, false);
        _setOperatorApproval(token, operator, true, rateAllowance, lockupAllowance, maxLockupPeriod);
        _depositWithPermit(token, to, amount, deadline, v, r, s);
        _checkAndSettle(token, to, false);
    }

    /// Only what is not locked can leave, and only once the lockup is settled to this epoch.
    function withdraw(address token, uint256 amount)
        external
        nonReentrant
        settlesAccount(token, msg.sender, true)
    {
        _withdraw(token, msg.sender, amount);
    }

    function withdrawTo(address token, address to, uint256 amount)
        external
        nonReentrant
        nonZero(to, "to")
        settlesAccount(token, msg.sender, true)
    {
        _withdraw(token, to, amount);
    }

    /// When the account would go into debt at its lockup rate, and its funds once settled to now
    /// (FilecoinPayV1.sol getAccountInfoIfSettled).
    function getAccountInfoIfSettled(address token, address owner)
        external
        view
        returns (uint256 fundedUntilEpoch, uint256 currentFunds, uint256 availableFunds, uint256 currentLockupRate)
    {
        Account storage account = accounts[token][owner];
        currentFunds = account.funds;
        currentLockupRate = account.lockupRate;
        fundedUntilEpoch = currentLockupRate == 0
            ? type(uint256).max
            : account.lockupLastSettledAt + (currentFunds - account.lockupCurrent) / currentLockupRate;
        uint256 settledAt = fundedUntilEpoch < block.number ? fundedUntilEpoch : block.number;
        availableFunds =
            currentFunds - (account.lockupCurrent + currentLockupRate * (settledAt - account.lockupLastSettledAt));
    }

    // ---- Operator approvals ----

    function setOperatorApproval(
        address token,
        address operator,
        bool approved,
        uint256 rateAllowance,
        uint256 lockupAllowance,
        uint256 maxLockupPeriod
    ) external nonReentrant nonZero(operator, "operator") {
        _setOperatorApproval(token, operator, approved, rateAllowance, lockupAllowance, maxLockupPeriod);
    }

    // ---- Rails ----

    /// The caller becomes the rail's operator; the payer must have approved it (FilecoinPayV1.sol createRail).
    function createRail(
        address token,
        address from,
        address to,
        address validator,
        uint256 commissionRateBps,
        address serviceFeeRecipient
    ) external nonReentrant nonZero(from, "from") nonZero(to, "to") returns (uint256 railId) {
        if (!operatorApprovals[token][from][msg.sender].isApproved) revert OperatorNotApproved(from, msg.sender);
        if (commissionRateBps > COMMISSION_MAX_BPS) revert CommissionRateTooHigh(COMMISSION_MAX_BPS, commissionRateBps);
        if (commissionRateBps != 0 && serviceFeeRecipient == address(0)) revert MissingServiceFeeRecipient();

        railId = nextRailId++;
        Rail storage rail = rails[railId];
        rail.token = token;
        rail.from = from;
        rail.to = to;
        rail.operator = msg.sender;
        rail.validator = validator;
        rail.settledUpTo = block.number;
        rail.commissionRateBps = commissionRateBps;
        rail.serviceFeeRecipient = serviceFeeRecipient;
        payerRails[token][from].push(railId);
        payeeRails[token][to].push(railId);
        emit RailCreated(railId, from, to, token, msg.sender, validator, serviceFeeRecipient, commissionRateBps);
    }

    function getRail(uint256 railId) external view railActive(railId) returns (RailView memory view_) {
        Rail storage rail = rails[railId];
        view_ = RailView({
            token: rail.token,
            from: rail.from,
            to: rail.to,
            operator: rail.operator,
            validator: rail.validator,
            paymentRate: rail.paymentRate,
            lockupPeriod: rail.lockupPeriod,
            lockupFixed: rail.lockupFixed,
            settledUpTo: rail.settledUpTo,
            endEpoch: rail.endEpoch,
            commissionRateBps: rail.commissionRateBps,
            serviceFeeRecipient: rail.serviceFeeRecipient
        });
    }

    function getRailsForPayerAndToken(address payer, address token, uint256 offset, uint256 limit)
        external
        view
        returns (RailInfo[] memory results, uint256 nextOffset, uint256 total)
    {
        return _railPage(payerRails[token][payer], offset, limit);
    }

    function getRailsForPayeeAndToken(address payee, address token, uint256 offset, uint256 limit)
        external
        view
        returns (RailInfo[] memory results, uint256 nextOffset, uint256 total)
    {
        return _railPage(payeeRails[token][payee], offset, limit);
    }

    function getRateChangeQueueSize(uint256 railId) external view returns (uint256) {
        Rail storage rail = rails[railId];
        return rail.queue.length - rail.queueHead;
    }

    /// Sets the rail's lockup period and fixed lockup (FilecoinPayV1.sol modifyRailLockup): on a
    /// terminated rail only a smaller fixed lockup; on a live one, while the payer's lockup is behind
    /// (underfunded), neither a new period nor a larger fixed lockup.
    function modifyRailLockup(uint256 railId, uint256 period, uint256 lockupFixed)
        external
        railActive(railId)
        onlyRailOperator(railId)
        nonReentrant
        settlesRailPayer(railId, 0)
    {
        Rail storage rail = rails[railId];
        uint256 oldPeriod = rail.lockupPeriod;
        uint256 oldFixed = rail.lockupFixed;
        if (rail.endEpoch > 0) {
            _modifyTerminatedRailLockup(rail, period, lockupFixed);
        } else {
            _modifyLiveRailLockup(rail, period, lockupFixed);
        }
        emit RailLockupModified(railId, oldPeriod, period, oldFixed, lockupFixed);
    }

    /// Changes the rate from the next epoch on and pays `oneTimePayment` out of the fixed lockup
    /// (FilecoinPayV1.sol modifyRailPayment).
    function modifyRailPayment(uint256 railId, uint256 newRate, uint256 oneTimePayment)
        external
        nonReentrant
        railActive(railId)
        onlyRailOperator(railId)
        settlesRailPayer(railId, oneTimePayment)
    {
        _modifyRailPayment(railId, newRate, oneTimePayment);
    }

    function _modifyRailPayment(uint256 railId, uint256 newRate, uint256 oneTimePayment) private {
        Rail storage rail = rails[railId];
        uint256 oldRate = rail.paymentRate;
        bool terminated = rail.endEpoch > 0;
        _checkRateChange(railId, rail, oldRate, newRate);
        _enqueueRateChange(rail, oldRate, newRate);

        // The rate is locked for the lockup period, or on a terminated rail for the epochs left to its end.
        uint256 period = terminated ? rail.endEpoch - block.number : rail.lockupPeriod;
        rail.lockupFixed -= oneTimePayment;
        rail.paymentRate = newRate;

        Account storage payer = accounts[rail.token][rail.from];
        OperatorApproval storage approval = operatorApprovals[rail.token][rail.from][rail.operator];
        if (!terminated) {
            // A terminated rail's rate already left the payer's lockup rate at termination.
            if (payer.lockupRate < oldRate) revert LockupRateLessThanOldRate(railId, rail.from, oldRate, payer.lockupRate);
            payer.lockupRate = payer.lockupRate - oldRate + newRate;
            _useRate(approval, oldRate, newRate);
        }
        payer.lockupCurrent = payer.lockupCurrent - oldRate * period + newRate * period - oneTimePayment;
        _useLockup(approval, oldRate * period, newRate * period);
        if (oneTimePayment > 0) {
            approval.lockupUsage -= oneTimePayment;
            approval.lockupAllowance =
                oneTimePayment > approval.lockupAllowance ? 0 : approval.lockupAllowance - oneTimePayment;
        }

        emit RailRateModified(railId, oldRate, newRate);
        _payOneTime(railId, rail, payer, oneTimePayment);
    }

    /// Ends the rail one lockup period after the payer's lockup is settled to (FilecoinPayV1.sol
    /// terminateRail). The payer may do it only while fully funded; the operator always.
    function terminateRail(uint256 railId)
        external
        railActive(railId)
        nonReentrant
        settlesRailPayer(railId, 0)
    {
        Rail storage rail = rails[railId];
        if (rail.endEpoch != 0) revert RailAlreadyTerminated(railId);
        Account storage payer = accounts[rail.token][rail.from];
        bool byFundedClient = msg.sender == rail.from && payer.lockupLastSettledAt == block.number;
        if (!byFundedClient && msg.sender != rail.operator) {
            revert NotAuthorizedToTerminateRail(railId, rail.from, rail.operator, msg.sender);
        }

        rail.endEpoch = payer.lockupLastSettledAt + rail.lockupPeriod;
        emit RailTerminated(railId, msg.sender, rail.endEpoch);
        if (rail.validator != address(0)) {
            IRailValidator(rail.validator).railTerminated(railId, msg.sender, rail.endEpoch);
        }

        // The rate stops accruing in the payer's lockup; the rail itself keeps it to settle up to endEpoch.
        if (payer.lockupRate < rail.paymentRate) {
            revert LockupRateInconsistent(railId, rail.from, rail.paymentRate, payer.lockupRate);
        }
        payer.lockupRate -= rail.paymentRate;
        _useRate(operatorApprovals[rail.token][rail.from][rail.operator], rail.paymentRate, 0);
    }

    /// Pays the rail up to `untilEpoch`, no further than the payer's lockup is settled (a live rail)
    /// or its end (a terminated one), as the validator allows (FilecoinPayV1.sol settleRail).
    function settleRail(uint256 railId, uint256 untilEpoch)
        external
        nonReentrant
        railActive(railId)
        settlesRailPayer(railId, 0)
        returns (
            uint256 totalSettledAmount,
            uint256 totalNetPayeeAmount,
            uint256 totalOperatorCommission,
            uint256 totalNetworkFee,
            uint256 finalSettledEpoch,
            string memory note
        )
    {
        Settlement memory s = _settleRail(railId, untilEpoch, false);
        return (s.gross, s.net, s.commission, s.fee, s.finalEpoch, s.note);
    }

    /// The payer's way out once a terminated rail's end has passed: pays in full without asking the
    /// validator (FilecoinPayV1.sol settleTerminatedRailWithoutValidation).
    function settleTerminatedRailWithoutValidation(uint256 railId)
        external
        nonReentrant
        railActive(railId)
        settlesRailPayer(railId, 0)
        returns (
            uint256 totalSettledAmount,
            uint256 totalNetPayeeAmount,
            uint256 totalOperatorCommission,
            uint256 totalNetworkFee,
            uint256 finalSettledEpoch,
            string memory note
        )
    {
        Rail storage rail = rails[railId];
        if (rail.endEpoch == 0) revert RailNotTerminated(railId);
        if (rail.from != msg.sender) revert OnlyRailClientAllowed(rail.from, msg.sender);
        if (block.number <= rail.endEpoch) {
            revert CannotSettleTerminatedRailBeforeMaxEpoch(railId, rail.endEpoch + 1, block.number);
        }
        Settlement memory s = _settleRail(railId, rail.endEpoch, true);
        return (s.gross, s.net, s.commission, s.fee, s.finalEpoch, s.note);
    }

    // ---- Internals: accounts ----

    function _railPayerBefore(uint256 railId, uint256 oneTimePayment) private returns (address token, address payer) {
        Rail storage rail = rails[railId];
        token = rail.token;
        payer = rail.from;
        if (payer == address(0)) revert RailInactiveOrSettled(railId);
        if (rail.lockupFixed < oneTimePayment) {
            revert OneTimePaymentExceedsLockup(railId, rail.lockupFixed, oneTimePayment);
        }
        _checkAndSettle(token, payer, false);
    }

    function _checkAndSettle(address token, address owner, bool full) private {
        Account storage account = accounts[token][owner];
        if (account.funds < account.lockupCurrent) {
            revert LockupExceedsFundsInvariant(token, owner, account.lockupCurrent, account.funds);
        }
        _settleAccountLockup(token, owner, account);
        require(!full || account.lockupLastSettledAt == block.number, "lockup not settled to this epoch: funds too low");
        if (account.funds < account.lockupCurrent) {
            revert LockupExceedsFundsInvariant(token, owner, account.lockupCurrent, account.funds);
        }
    }

    /// Adds lockupRate for each epoch since the last settlement to lockupCurrent, as far as funds
    /// allow in whole epochs (FilecoinPayV1.sol settleAccountLockup).
    function _settleAccountLockup(address token, address owner, Account storage account) private {
        if (block.number <= account.lockupLastSettledAt) return;
        if (account.lockupRate == 0) {
            account.lockupLastSettledAt = block.number;
        } else {
            uint256 accrued = account.lockupRate * (block.number - account.lockupLastSettledAt);
            if (account.funds >= account.lockupCurrent + accrued) {
                account.lockupCurrent += accrued;
                account.lockupLastSettledAt = block.number;
            } else {
                uint256 unlocked = account.funds - account.lockupCurrent;
                if (unlocked == 0) return;
                uint256 epochs = unlocked / account.lockupRate;
                account.lockupCurrent += account.lockupRate * epochs;
                account.lockupLastSettledAt += epochs;
            }
        }
        emit AccountLockupSettled(token, owner, account.lockupCurrent, account.lockupRate, account.lockupLastSettledAt);
    }

    function _depositWithPermit(
        address token,
        address to,
        uint256 amount,
        uint256 deadline,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        if (token == address(0)) revert NativeTokenNotSupported();
        IPayToken(token).permit(to, address(this), amount, deadline, v, r, s);
        amount = _pullIn(token, to, amount);
        accounts[token][to].funds += amount;
        emit DepositRecorded(token, to, to, amount);
    }

    function _withdraw(address token, address to, uint256 amount) private {
        Account storage account = accounts[token][msg.sender];
        uint256 available = account.funds - account.lockupCurrent;
        if (amount > available) revert InsufficientUnlockedFunds(available, amount);
        amount = _pushOut(token, to, amount);
        if (amount > available) revert InsufficientUnlockedFunds(available, amount);
        account.funds -= amount;
        emit WithdrawRecorded(token, msg.sender, to, amount);
    }

    /// Counts what arrived, not what was asked (FilecoinPayV1.sol transferIn).
    function _pullIn(address token, address from, uint256 amount) private returns (uint256) {
        uint256 before = IPayToken(token).balanceOf(address(this));
        _callToken(token, abi.encodeCall(IPayToken.transferFrom, (from, address(this), amount)));
        return IPayToken(token).balanceOf(address(this)) - before;
    }

    function _pushOut(address token, address to, uint256 amount) private returns (uint256) {
        uint256 before = IPayToken(token).balanceOf(address(this));
        _callToken(token, abi.encodeCall(IPayToken.transfer, (to, amount)));
        return before - IPayToken(token).balanceOf(address(this));
    }

    /// A token call that must succeed and answer true or nothing; a revert is passed on as it came.
    function _callToken(address token, bytes memory data) private {
        if (token.code.length == 0) revert SafeERC20FailedOperation(token);
        (bool ok, bytes memory answer) = token.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(answer, 32), mload(answer))
            }
        }
        if (answer.length != 0 && !abi.decode(answer, (bool))) revert SafeERC20FailedOperation(token);
    }

    function _setOperatorApproval(
        address token,
        address operator,
        bool approved,
        uint256 rateAllowance,
        uint256 lockupAllowance,
        uint256 maxLockupPeriod
    ) private {
        OperatorApproval storage approval = operatorApprovals[token][msg.sender][operator];
        approval.isApproved = approved;
        approval.rateAllowance = rateAllowance;
        approval.lockupAllowance = lockupAllowance;
        approval.maxLockupPeriod = maxLockupPeriod;
        emit OperatorApprovalUpdated(token, msg.sender, operator, approved, rateAllowance, lockupAllowance, maxLockupPeriod);
    }

    /// Usage may exceed a lowered allowance; then only decreases pass (FilecoinPayV1.sol updateOperatorRateUsage).
    function _useRate(OperatorApproval storage approval, uint256 oldRate, uint256 newRate) private {
        if (newRate > oldRate) {
            uint256 usage = approval.rateUsage + (newRate - oldRate);
            if (usage > approval.rateAllowance) revert OperatorRateAllowanceExceeded(approval.rateAllowance, usage);
            approval.rateUsage = usage;
        } else if (oldRate > newRate) {
            uint256 decrease = oldRate - newRate;
            approval.rateUsage = approval.rateUsage > decrease ? approval.rateUsage - decrease : 0;
        }
    }

    function _useLockup(OperatorApproval storage approval, uint256 oldLockup, uint256 newLockup) private {
        if (newLockup > oldLockup) {
            uint256 usage = approval.lockupUsage + (newLockup - oldLockup);
            if (usage > approval.lockupAllowance) {
                revert OperatorLockupAllowanceExceeded(approval.lockupAllowance, usage);
            }
            approval.lockupUsage = usage;
        } else if (oldLockup > newLockup) {
            uint256 decrease = oldLockup - newLockup;
            approval.lockupUsage = approval.lockupUsage > decrease ? approval.lockupUsage - decrease : 0;
        }
    }

    // ---- Internals: rails ----

    function _modifyTerminatedRailLockup(Rail storage rail, uint256 period, uint256 lockupFixed) private {
        if (period != rail.lockupPeriod || lockupFixed > rail.lockupFixed) {
            revert InvalidTerminatedRailModification(rail.lockupPeriod, rail.lockupFixed, period, lockupFixed);
        }
        Account storage payer = accounts[rail.token][rail.from];
        uint256 reduction = rail.lockupFixed - lockupFixed;
        if (payer.lockupCurrent < reduction) {
            revert InsufficientCurrentLockup(rail.token, rail.from, payer.lockupCurrent, reduction);
        }
        payer.lockupCurrent -= reduction;
        _useLockup(operatorApprovals[rail.token][rail.from][rail.operator], rail.lockupFixed, lockupFixed);
        rail.lockupFixed = lockupFixed;
    }

    function _modifyLiveRailLockup(Rail storage rail, uint256 period, uint256 lockupFixed) private {
        Account storage payer = accounts[rail.token][rail.from];
        if (payer.lockupLastSettledAt != block.number) {
            if (period != rail.lockupPeriod) {
                revert LockupPeriodChangeNotAllowedDueToInsufficientFunds(
                    rail.token, rail.from, rail.lockupPeriod, period
                );
            }
            if (lockupFixed > rail.lockupFixed) {
                revert LockupFixedIncreaseNotAllowedDueToInsufficientFunds(
                    rail.token, rail.from, rail.lockupFixed, lockupFixed
                );
            }
        }
        OperatorApproval storage approval = operatorApprovals[rail.token][rail.from][rail.operator];
        // Only a longer period is held to the operator's maximum.
        if (period > rail.lockupPeriod && period > approval.maxLockupPeriod) {
            revert LockupPeriodExceedsOperatorMaximum(rail.token, rail.operator, approval.maxLockupPeriod, period);
        }
        uint256 oldLockup = rail.lockupFixed + rail.paymentRate * rail.lockupPeriod;
        uint256 newLockup = lockupFixed + rail.paymentRate * period;
        if (payer.lockupCurrent < oldLockup) {
            revert CurrentLockupLessThanOldLockup(rail.token, rail.from, oldLockup, payer.lockupCurrent);
        }
        // Funds not covering the new lockup make the after-check revert.
        payer.lockupCurrent = payer.lockupCurrent - oldLockup + newLockup;
        _useLockup(approval, oldLockup, newLockup);
        rail.lockupPeriod = period;
        rail.lockupFixed = lockupFixed;
    }

    /// A terminated rail's rate may only go down, and only before its end; a live rail's rate may
    /// change only while the payer's lockup is settled to this epoch (FilecoinPayV1.sol modifyRailPayment).
    function _checkRateChange(uint256 railId, Rail storage rail, uint256 oldRate, uint256 newRate) private view {
        if (rail.endEpoch > 0) {
            if (block.number >= rail.endEpoch) {
                revert CannotModifyTerminatedRailBeyondEndEpoch(railId, rail.endEpoch, block.number);
            }
            if (newRate > oldRate) revert RateChangeNotAllowedOnTerminatedRail(railId);
        } else {
            bool settled = accounts[rail.token][rail.from].lockupLastSettledAt == block.number;
            if (!settled && newRate != oldRate) {
                revert LockupNotSettledRateChangeNotAllowed(railId, rail.from, settled, oldRate, newRate);
            }
        }
    }

    /// Remembers the old rate up to this epoch so that settlement pays each epoch at the rate it had
    /// (FilecoinPayV1.sol enqueueRateChange).
    function _enqueueRateChange(Rail storage rail, uint256 oldRate, uint256 newRate) private {
        if (newRate == oldRate || rail.settledUpTo == block.number) return;
        bool empty = rail.queueHead == rail.queue.length;
        if (oldRate == 0 && empty) {
            // Nothing is owed for epochs at rate zero: the rail counts as settled up to now.
            rail.settledUpTo = block.number;
            return;
        }
        if (empty || rail.queue[rail.queue.length - 1].untilEpoch != block.number) {
            rail.queue.push(RateChange({rate: oldRate, untilEpoch: block.number}));
        }
    }

    function _dequeue(Rail storage rail) private {
        uint256 head = rail.queueHead;
        if (head + 1 == rail.queue.length) {
            delete rail.queue;
            rail.queueHead = 0;
        } else {
            delete rail.queue[head];
            rail.queueHead = head + 1;
        }
    }

    function _payOneTime(uint256 railId, Rail storage rail, Account storage payer, uint256 amount) private {
        if (amount == 0) return;
        if (payer.funds < amount) revert InsufficientFundsForOneTimePayment(rail.token, rail.from, amount, payer.funds);
        payer.funds -= amount;
        (uint256 net, uint256 commission, uint256 fee) =
            _takeFees(amount, rail.token, rail.serviceFeeRecipient, rail.commissionRateBps);
        accounts[rail.token][rail.to].funds += net;
        emit RailOneTimePaymentProcessed(railId, net, commission, fee);
    }

    /// The network fee (1/200, rounded up) goes to this contract's own account, then the operator's
    /// commission out of the rest (FilecoinPayV1.sol calculateAndPayFees).
    function _takeFees(uint256 amount, address token, address feeRecipient, uint256 commissionRateBps)
        private
        returns (uint256 net, uint256 commission, uint256 fee)
    {
        fee = (amount * NETWORK_FEE_NUMERATOR + NETWORK_FEE_DENOMINATOR - 1) / NETWORK_FEE_DENOMINATOR;
        accounts[token][address(this)].funds += fee;
        AuctionInfo storage auction = auctionInfo[token];
        if (auction.startPrice == 0) {
            auction.startPrice = FIRST_AUCTION_START_PRICE;
            auction.startTime = uint168(block.timestamp);
        }
        amount -= fee;
        commission = amount * commissionRateBps / COMMISSION_MAX_BPS;
        net = amount - commission;
        if (commission > 0) accounts[token][feeRecipient].funds += commission;
    }

    function _settleRail(uint256 railId, uint256 untilEpoch, bool skipValidation)
        private
        returns (Settlement memory out)
    {
        if (untilEpoch > block.number) revert CannotSettleFutureEpochs(railId, untilEpoch, block.number);
        Rail storage rail = rails[railId];
        Account storage payer = accounts[rail.token][rail.from];
        bool terminated = rail.endEpoch > 0;

        if (terminated && rail.settledUpTo >= rail.endEpoch) {
            _finalize(railId, rail, payer);
            // read after finalization, as the real contract does: zero
            out.finalEpoch = rail.settledUpTo;
            out.note = "terminated rail already settled: finalized";
            return out;
        }

        // A live rail is paid only for epochs already in the payer's settled lockup.
        uint256 target = terminated ? rail.endEpoch : payer.lockupLastSettledAt;
        if (untilEpoch < target) target = untilEpoch;
        uint256 start = rail.settledUpTo;
        if (start >= target) {
            out.finalEpoch = start;
            out.note = string.concat("already settled up to epoch ", _decimal(target));
            return out;
        }

        if (rail.queueHead == rail.queue.length) {
            (out.gross, out.note) = _settleSegment(railId, start, target, rail.paymentRate, skipValidation);
            if (rail.settledUpTo <= start) revert NoProgressInSettlement(railId, start + 1, rail.settledUpTo);
        } else {
            (out.gross, out.note) = _settleWithRateChanges(railId, start, target, skipValidation);
        }

        if (out.gross > 0) {
            (out.net, out.commission, out.fee) =
                _takeFees(out.gross, rail.token, rail.serviceFeeRecipient, rail.commissionRateBps);
            accounts[rail.token][rail.to].funds += out.net;
        }
        out.finalEpoch = rail.settledUpTo;
        if (terminated && rail.settledUpTo >= rail.endEpoch) {
            _finalize(railId, rail, payer);
            out.note = string.concat(out.note, "terminated rail settled to its end: finalized.");
        }
        emit RailSettled(railId, out.gross, out.net, out.commission, out.fee, out.finalEpoch);
    }

    /// Settles segment by segment, each at the rate it had (FilecoinPayV1.sol _settleWithRateChanges);
    /// stops early where the validator settles less than a whole segment.
    function _settleWithRateChanges(uint256 railId, uint256 processed, uint256 target, bool skipValidation)
        private
        returns (uint256 total, string memory note)
    {
        Rail storage rail = rails[railId];
        while (processed < target) {
            uint256 boundary = target;
            uint256 rate = rail.paymentRate;
            if (rail.queueHead < rail.queue.length) {
                RateChange storage next = rail.queue[rail.queueHead];
                if (next.untilEpoch < processed) revert InvalidRateChangeQueueState(next.untilEpoch, processed);
                if (next.untilEpoch < boundary) boundary = next.untilEpoch;
                rate = next.rate;
            }
            if (rate != 0) {
                (uint256 gross, string memory segmentNote) =
                    _settleSegment(railId, processed, boundary, rate, skipValidation);
                if (rail.settledUpTo <= processed) break;
                total += gross;
                if (bytes(segmentNote).length > 0) {
                    note = bytes(note).length > 0 ? string.concat(note, "; ", segmentNote) : segmentNote;
                }
                if (rail.settledUpTo < boundary) break;
            } else {
                rail.settledUpTo = boundary;
            }
            processed = boundary;
            if (rail.queueHead < rail.queue.length && boundary >= rail.queue[rail.queueHead].untilEpoch) {
                _dequeue(rail);
            }
        }
    }

    /// Pays rate × epochs for (start, end], or what the validator decides for the epochs it confirms,
    /// out of the payer's funds and lockup (FilecoinPayV1.sol _settleSegmentGross).
    function _settleSegment(uint256 railId, uint256 start, uint256 end, uint256 rate, bool skipValidation)
        private
        returns (uint256 gross, string memory note)
    {
        Rail storage rail = rails[railId];
        if (rate == 0) {
            rail.settledUpTo = end;
            return (0, "zero rate: nothing to pay");
        }
        gross = rate * (end - start);
        uint256 settledUntil = end;
        if (rail.validator != address(0) && !skipValidation) {
            IRailValidator.ValidationResult memory result =
                IRailValidator(rail.validator).validatePayment(railId, gross, start, end, rate);
            if (result.settleUpto > end) revert ValidatorSettledBeyondSegmentEnd(railId, end, result.settleUpto);
            if (result.settleUpto < start) revert ValidatorSettledBeforeSegmentStart(railId, start, result.settleUpto);
            settledUntil = result.settleUpto;
            gross = result.modifiedAmount;
            note = result.note;
            uint256 most = rate * (settledUntil - start);
            if (gross > most) revert ValidatorModifiedAmountExceedsMaximum(railId, most, gross);
        }
        _chargePayer(rail, gross, rate * (settledUntil - start));
        rail.settledUpTo = settledUntil;
    }

    function _chargePayer(Rail storage rail, uint256 gross, uint256 lockupUsed) private {
        Account storage payer = accounts[rail.token][rail.from];
        if (payer.funds < gross) revert InsufficientFundsForSettlement(rail.token, rail.from, gross, payer.funds);
        if (payer.lockupCurrent < lockupUsed) {
            revert InsufficientLockupForSettlement(rail.token, rail.from, payer.lockupCurrent, lockupUsed);
        }
        payer.funds -= gross;
        // The lockup goes down by the full rate for the epochs settled, even when the validator paid less.
        payer.lockupCurrent -= lockupUsed;
        if (payer.lockupCurrent > payer.funds) {
            revert LockupExceedsFundsInvariant(rail.token, rail.from, payer.lockupCurrent, payer.funds);
        }
    }

    /// Releases the fixed lockup and clears the rail (FilecoinPayV1.sol finalizeTerminatedRail).
    function _finalize(uint256 railId, Rail storage rail, Account storage payer) private {
        if (payer.lockupCurrent < rail.lockupFixed) {
            revert LockupInconsistencyDuringRailFinalization(
                railId, rail.token, rail.from, rail.lockupFixed, payer.lockupCurrent
            );
        }
        payer.lockupCurrent -= rail.lockupFixed;
        _useLockup(
            operatorApprovals[rail.token][rail.from][rail.operator],
            rail.lockupFixed + rail.paymentRate * rail.lockupPeriod,
            0
        );
        if (rail.queueHead < rail.queue.length) {
            revert RateChangeQueueNotEmpty(rail.queue[rail.queue.length - 1].untilEpoch);
        }
        rail.token = address(0);
        rail.from = address(0);
        rail.to = address(0);
        rail.operator = address(0);
        rail.validator = address(0);
        rail.paymentRate = 0;
        rail.lockupFixed = 0;
        rail.lockupPeriod = 0;
        rail.settledUpTo = 0;
        rail.endEpoch = 0;
        rail.commissionRateBps = 0;
        emit RailFinalized(railId);
    }

    /// A page of a payer's or payee's rails; finalized rails are skipped but still counted in `total`
    /// (FilecoinPayV1.sol _getRailsForAddressAndToken). A limit of 0 means all.
    function _railPage(uint256[] storage ids, uint256 offset, uint256 limit)
        private
        view
        returns (RailInfo[] memory results, uint256 nextOffset, uint256 total)
    {
        total = ids.length;
        if (offset >= total) return (new RailInfo[](0), total, total);
        if (limit == 0 || limit > total - offset) limit = total - offset;
        nextOffset = offset + limit;
        results = new RailInfo[](limit);
        uint256 count = 0;
        for (uint256 i = offset; i < nextOffset; i++) {
            Rail storage rail = rails[ids[i]];
            if (rail.from == address(0)) continue;
            results[count++] = RailInfo({railId: ids[i], isTerminated: rail.endEpoch > 0, endEpoch: rail.endEpoch});
        }
        assembly ("memory-safe") {
            mstore(results, count)
        }
    }

    function _decimal(uint256 value) private pure returns (string memory) {
        if (value == 0) return "0";
        uint256 digits = 0;
        for (uint256 v = value; v != 0; v /= 10) digits++;
        bytes memory out = new bytes(digits);
        for (; value != 0; value /= 10) out[--digits] = bytes1(uint8(48 + value % 10));
        return string(out);
    }
}
