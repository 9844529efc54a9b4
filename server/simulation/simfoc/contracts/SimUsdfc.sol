// SPDX-License-Identifier: MIT
pragma solidity ^0.8.30;

/// The simulated network's USDFC: an ERC-20 with 18 decimals and EIP-2612 permits,
/// which the Synapse SDK signs with the domain {name(), version(), chainId, this}
/// (synapse-core typed-data/sign-erc20-permit.ts). The deployer is the faucet: only it mints.
contract SimUsdfc {
    string public constant name = "USD for Filecoin Community";
    string public constant symbol = "USDFC";
    string public constant version = "1";
    uint8 public constant decimals = 18;

    bytes32 private constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 private constant PERMIT_TYPEHASH =
        keccak256("Permit(address owner,address spender,uint256 value,uint256 nonce,uint256 deadline)");
    /// Half the secp256k1 order: signatures with a larger s are malleable copies and refused (EIP-2).
    uint256 private constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    address public immutable minter;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => uint256) public nonces;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    // The error names OpenZeppelin's ERC20 and ERC20Permit use, which a real USDFC answers with.
    error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed);
    error ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed);
    error ERC20InvalidReceiver(address receiver);
    error ERC2612ExpiredSignature(uint256 deadline);
    error ERC2612InvalidSigner(address signer, address owner);
    error OnlyMinter(address caller);

    constructor() {
        minter = msg.sender;
    }

    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return keccak256(
            abi.encode(DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this))
        );
    }

    function mint(address to, uint256 amount) external {
        if (msg.sender != minter) revert OnlyMinter(msg.sender);
        if (to == address(0)) revert ERC20InvalidReceiver(to);
        totalSupply += amount;
        balanceOf[to] += amount;
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _move(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        _approve(msg.sender, spender, amount);
        return true;
    }

    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        // An allowance of 2^256-1 stands for "unlimited" and is never spent down.
        if (allowed != type(uint256).max) {
            if (allowed < amount) revert ERC20InsufficientAllowance(msg.sender, allowed, amount);
            allowance[from][msg.sender] = allowed - amount;
        }
        _move(from, to, amount);
        return true;
    }

    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external
    {
        if (block.timestamp > deadline) revert ERC2612ExpiredSignature(deadline);
        bytes32 structHash = keccak256(abi.encode(PERMIT_TYPEHASH, owner, spender, value, nonces[owner], deadline));
        bytes32 digest = keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
        address signer = address(0);
        if (uint256(s) <= HALF_ORDER) signer = ecrecover(digest, v, r, s);
        if (signer == address(0) || signer != owner) revert ERC2612InvalidSigner(signer, owner);
        nonces[owner] += 1;
        _approve(owner, spender, value);
    }

    function _approve(address owner, address spender, uint256 amount) private {
        allowance[owner][spender] = amount;
        emit Approval(owner, spender, amount);
    }

    function _move(address from, address to, uint256 amount) private {
        if (to == address(0)) revert ERC20InvalidReceiver(to);
        uint256 held = balanceOf[from];
        if (held < amount) revert ERC20InsufficientBalance(from, held, amount);
        balanceOf[from] = held - amount;
        balanceOf[to] += amount;
        emit Transfer(from, to, amount);
    }
}
